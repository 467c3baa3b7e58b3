package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"time"

	"backup/format"
)

// ReuseOptions say when a file counts as unchanged since the reference was made.
type ReuseOptions struct {
	// IgnoreInode and IgnoreCtime leave those out of the comparison, for file systems on
	// which they are not stable (FUSE, some network mounts), as restic's flags of these names.
	// As restic's, IgnoreInode leaves out the change time too: a file given a new inode (a
	// copied tree, a remount) has a new change time as well, so the one without the other
	// would reuse nothing.
	IgnoreInode bool
	IgnoreCtime bool
	// Started is when the reference's run started (its receipt's started_at). A file whose
	// timestamps have whole seconds (ext3, FAT, ext4 with small inodes, many network file
	// systems) and are not older than the seconds just before it may have been written
	// again after that run read it, within the same second: git calls such an entry racily
	// clean. It is not reused but read again. Zero trusts every entry.
	Started time.Time
	// Unseal, when set, opens a reference that is an encrypted archive (see Unseal): its
	// file as stored is hashed against its receipt, its entries copied from its zip.
	Unseal Unseal
}

// saveOrReuse is save for an item, unless the item's file is unchanged since the reference:
// then the entry is copied when its turn comes. Options.Fresh is asked here, by a worker,
// rather than as the file is queued: it may open the file, and the walk's goroutine is the
// run's critical path.
func (s *saver) saveOrReuse(ctx context.Context, it *item) outcome {
	if it.reuse != nil && s.fresh != nil && s.fresh(it.src, it.name) {
		it.reuse = nil
	}
	if it.reuse != nil && s.xattrs && !s.reusedAttrs(it) {
		it.reuse = nil
	}
	if it.reuse == nil {
		return s.save(ctx, it)
	}
	err := it.reuse.damage
	var o outcome
	if err == nil {
		o, err = s.checkReused(ctx, it)
	}
	if err == nil || o.fatal != nil {
		return o
	}
	o = s.save(ctx, it)
	o.reread = &fs.PathError{Op: format.OpReuse, Path: it.name, Err: fmt.Errorf("reference entry %w; read from the file instead", err)}
	return o
}

// reusedAttrs reads again, through a descriptor of the file at the item's name, the
// extended attributes the walk read by name after its lstat, and says whether that file is
// the one the lstat described (device, inode, owner, size, mtime and mode, and change time
// unless IgnoreCtime): a file renamed over the name in between would lend the copied bytes
// its attributes. When it is not, or cannot be opened, the entry is not copied: the file is
// read instead, which says what became of it.
func (s *saver) reusedAttrs(it *item) bool {
	if it.meta == nil {
		return false
	}
	f, err := s.open(it.src, it.name)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !describes(it, info, s.ignoreInode) ||
		info.Size() != it.info.Size() || !info.ModTime().Equal(it.info.ModTime()) || info.Mode() != it.info.Mode() {
		return false
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !ok || !s.ignoreCtime && it.meta.CtimeNsec != st.Ctim.Nano() {
		return false
	}
	x, ok := f.(xattrFile)
	if !ok {
		return false
	}
	attrs, err := x.Xattrs()
	if err != nil {
		return false
	}
	it.meta.Xattrs = attrs
	return true
}

// rawBufSize is the buffer a worker reads reference entries through: a new 32 KiB buffer
// per entry, as io.Copy would take, cost more than the check itself at 10,000 small files.
const rawBufSize = 256 << 10

var errChangedSince = errors.New("damaged: its compressed bytes changed since the reference was read")

// checkReused reads the entry's compressed bytes and compares their keyed digest with the
// one the pass over the reference took. A worker does it before the entry's turn comes, so
// that an entry changed since the pass is read from the source instead, never copied. The
// bytes checked are held for the writer when the spools' budget has room for them (see
// held.go). A larger entry is checked as it is copied straight into the archive once its
// turn has come (copyReused), and taken back when it does not match; one that cannot be
// is only checked here, and read again by the writer.
func (s *saver) checkReused(ctx context.Context, it *item) (outcome, error) {
	e := it.reuse
	held, err := holdIn(s.spools, e.raw(), e.csize)
	if s.rawBuf == nil && held == nil {
		s.rawBuf = make([]byte, rawBufSize)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return outcome{}, errChangedSince // cut short since the pass
	case err != nil:
		return outcome{}, err
	case held != nil && !e.sameKey(held.data):
		held.release()
		return outcome{}, errChangedSince
	case held != nil:
		return outcome{reused: e, held: held}, nil
	}
	if d := s.direct.reused(it.name, it.info, e); d != nil {
		return d.copyReused(ctx, e, s.rawBuf)
	}
	return outcome{reused: e}, e.check(s.rawBuf)
}

// sameKey says whether data, the entry's compressed bytes, have the keyed digest the pass
// over the reference took.
func (e *refEntry) sameKey(data []byte) bool {
	k := newKeyedSum(e.seed)
	k.Write(data)
	return k.Sum64() == e.key
}

// check is checkReused of an entry not held: its bytes are read through buf.
func (e *refEntry) check(buf []byte) error {
	same, err := e.copyKeyed(io.Discard, buf)
	if err == nil && !same {
		return errChangedSince
	}
	return err
}

// writeReused copies the reference's entry for it: the same compressed bytes, CRC-32 and
// sizes, under a header made from the file as this run found it, which is the header a
// fresh entry would have. The bytes are those held, which a worker or the writing goroutine
// checked (see inline.go), or those a worker copied into the archive and checked on the way
// (copyReused). In a stream, where nothing can be taken back, an entry too large to hold is
// read again and digested on the way as the pass over the reference digested it (see
// refpass.go): a reference changed since the worker's check fails the run rather than put
// bytes in the archive that nothing checked.
func (w *Writer) writeReused(it *item, e *refEntry, held []byte, direct *directOut) error {
	fh := fileHeader(it.name, it.info, e.method, e.crc, e.csize, e.size, it.meta)
	if direct != nil { // copied into the archive and checked by a worker
		if err := direct.finish(fh); err != nil {
			return err
		}
		if w.opts.OnFile != nil {
			w.opts.OnFile(format.File{Path: it.name, Size: e.size, SHA256: e.sha, Link: it.link, Meta: w.reusedMeta(it, e), Reused: true})
		}
		return nil
	}
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	if held != nil { // the very bytes checked
		if _, err := zf.Write(held); err != nil {
			return err
		}
	} else if same, err := e.copyKeyed(zf, w.buffer()); err != nil || !same {
		return fmt.Errorf("copying %s from the reference: %w", it.name, cmp.Or(err, errChangedDuring))
	}
	if w.opts.OnFile != nil {
		w.opts.OnFile(format.File{Path: it.name, Size: e.size, SHA256: e.sha, Link: it.link, Meta: w.reusedMeta(it, e), Reused: true})
	}
	return nil
}

// reusedMeta is the metadata the manifest records for it, whose entry was copied from the
// reference's e: the file's, but for what the copy was not compared with. Under
// IgnoreCtime the change time, under IgnoreInode the inode and change time, are those the
// reference recorded, which vouched for the bytes: recorded as the file has them now, they
// would let a later run that compares them (without the flag) take the bytes as checked
// against them, and copy a file rewritten with its mtime put back stale for good.
func (w *Writer) reusedMeta(it *item, e *refEntry) *format.Meta {
	m := it.meta
	if m == nil || !w.opts.IgnoreCtime && !w.opts.IgnoreInode {
		return m
	}
	if m.CtimeNsec == e.ctime && (!w.opts.IgnoreInode || m.Ino == e.ino) {
		return m // the same: a run with --reread records these too
	}
	c := *m
	c.CtimeNsec = e.ctime
	if w.opts.IgnoreInode {
		c.Ino = e.ino
	}
	return &c
}

// copyKeyed copies the entry's compressed bytes from the reference to w through buf,
// digesting them on the way as the pass over the reference digested them, and says whether
// their digest is the pass's.
func (e *refEntry) copyKeyed(w io.Writer, buf []byte) (same bool, err error) {
	k := newKeyedSum(e.seed)
	if _, err := io.CopyBuffer(io.MultiWriter(w, k), onlyReader{e.raw()}, buf); err != nil {
		return false, err
	}
	return k.Sum64() == e.key, nil
}

var errChangedDuring = errors.New("the reference changed during the run")

// raw reads the entry's compressed bytes, where the pass over the reference found them.
func (e *refEntry) raw() io.Reader {
	return io.NewSectionReader(e.ra, e.data, e.csize)
}

// copyReused waits for the turn of the entry d is for, then copies the reference's entry e
// into the archive through buf, digesting it on the way as the pass digested it: the only
// read of it since the pass (a worker's check and the writer's copy read the 93 MB of the
// bench corpus's largest entries twice). When the bytes are not those the pass found, what
// was written is taken back and errChangedSince returned, so that the file is read from its
// source instead; a failed write of the archive is the run's.
func (d *directOut) copyReused(ctx context.Context, e *refEntry, buf []byte) (outcome, error) {
	select {
	case <-d.head:
	case <-d.w.halted:
		return outcome{fatal: d.w.err()}, nil
	case <-ctx.Done():
		return outcome{fatal: ctx.Err()}, nil
	}
	if err := d.open(); err != nil {
		if d.on {
			d.rollback()
		}
		return outcome{fatal: err}, nil
	}
	out := &failedWrite{w: d.w.out}
	same, err := e.copyKeyed(out, buf)
	switch {
	case out.err != nil:
		d.rollback()
		return outcome{fatal: out.err}, nil
	case err != nil || !same:
		d.rollback()
		return outcome{}, cmp.Or(err, errChangedSince)
	}
	return outcome{reused: e, direct: d}, nil
}

// failedWrite remembers the error of a failed write, to tell it from a failed read.
type failedWrite struct {
	w   io.Writer
	err error
}

func (f *failedWrite) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}
