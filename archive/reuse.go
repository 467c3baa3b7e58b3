package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

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
	if it.reuse == nil {
		return s.save(ctx, it.src, it.name)
	}
	err := it.reuse.damage
	var held *heldEntry
	if err == nil {
		held, err = s.checkReused(it.reuse)
	}
	if err == nil {
		return outcome{reused: it.reuse, held: held}
	}
	o := s.save(ctx, it.src, it.name)
	o.reread = &fs.PathError{Op: format.OpReuse, Path: it.name, Err: fmt.Errorf("reference entry %w; read from the file instead", err)}
	return o
}

// rawBufSize is the buffer a worker reads reference entries through: a new 32 KiB buffer
// per entry, as io.Copy would take, cost more than the check itself at 10,000 small files.
const rawBufSize = 256 << 10

var errChangedSince = errors.New("damaged: its compressed bytes changed since the reference was read")

// checkReused reads the entry's compressed bytes and compares their keyed digest with the
// one the pass over the reference took. A worker does it before the entry's turn comes, so
// that an entry changed since the pass is read from the source instead, never copied. The
// bytes checked are held for the writer when the spools' budget has room for them (see
// held.go); nil when they are not.
func (s *saver) checkReused(e *refEntry) (*heldEntry, error) {
	held, err := holdIn(s.spools, e.raw(), e.csize)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return nil, errChangedSince // cut short since the pass
	case err != nil:
		return nil, err
	case held == nil:
		if s.rawBuf == nil {
			s.rawBuf = make([]byte, rawBufSize)
		}
		return nil, e.check(s.rawBuf)
	case !e.sameKey(held.data):
		held.release()
		return nil, errChangedSince
	}
	return held, nil
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
// fresh entry would have. The bytes are those held, which a worker checked; an entry too
// large to hold is read again and digested on the way as the pass over the reference
// digested it (see refpass.go): a reference changed since then fails the run rather than
// put bytes in the archive that nothing checked.
func (w *Writer) writeReused(it *item, e *refEntry, held *heldEntry) error {
	fh := fileHeader(it.name, it.info, e.method, e.crc, e.csize, e.size, it.meta)
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	if held != nil { // the very bytes a worker checked
		if _, err := zf.Write(held.data); err != nil {
			return err
		}
	} else if same, err := e.copyKeyed(zf, w.buffer()); err != nil || !same {
		return fmt.Errorf("copying %s from the reference: %w", it.name, cmp.Or(err, errChangedDuring))
	}
	if w.opts.OnFile != nil {
		w.opts.OnFile(format.File{Path: it.name, Size: e.size, SHA256: e.sha, Link: it.link, Meta: it.meta, Reused: true})
	}
	return nil
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
