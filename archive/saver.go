package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"

	"backup/format"
	"backup/skiprules"
	"backup/walker"
)

// ErrChanged is the cause of a warning for a file that kept changing while it was read. The
// last copy read is archived.
var ErrChanged = errors.New("changed while being read")

// maxReads is how often a changing file is read before its last copy is kept.
const maxReads = 3

// SourceFile is what the archiver reads a file through: a *walker.File, opened by the
// walker's Handle unless Options.Open says otherwise.
type SourceFile interface {
	io.Reader
	Stat() (fs.FileInfo, error)
	Close() error
}

func openSource(src walker.Handle, _ string) (SourceFile, error) {
	f, err := src.OpenRaw()
	if err != nil {
		return nil, err // not a nil *walker.File in an interface
	}
	return f, nil
}

// staged is one file read and compressed, waiting for its turn to be written.
type staged struct {
	info   fs.FileInfo // fstat after reading
	method uint16
	crc    uint32
	sum    [sha256.Size]byte
	size   int64
	data   *spool
	copyOf *format.CopySource // set when the bytes are a copy made from the file
}

// outcome is what became of one file: staged (perhaps with a warning), skipped, or lost.
type outcome struct {
	staged *staged
	reused *refEntry  // copied from the reference instead
	held   *heldEntry // reused's compressed bytes, checked, when a worker could hold them
	direct *directOut // where a worker copied reused's entry into the archive, checked
	reread error      // why the reference's entry was not copied, when it was damaged
	skip   skiprules.Kind
	warn   error
	fatal  error
}

// saver reads files; one per worker goroutine.
type saver struct {
	comp        *encoder
	pool        *chunkPool
	spools      *spoolConfig
	bytesRead   *atomic.Int64
	open        func(src walker.Handle, name string) (SourceFile, error)
	fresh       func(src walker.Handle, name string) bool // Options.Fresh
	owners      *Owners                                   // Options.Owners
	ignoreInode bool                                      // Options.IgnoreInode
	ignoreCtime bool                                      // Options.IgnoreCtime or IgnoreInode
	xattrs      bool                                      // Options.Xattrs
	rawBuf      []byte                                    // for checking reference entries (see saveOrReuse)
	direct      *directTo                                 // for the item being read; nil when it cannot be streamed
	scratch     bytes.Buffer                              // a small file's compressed bytes, before the choice to keep them
}

// save reads the item's file: the one the walk listed as it.info, under the metadata it.meta
// the walk took from it, which is made again when a read opens another file (see remeta).
func (s *saver) save(ctx context.Context, it *item) outcome {
	var o outcome
	var relisted error // why the metadata was made again, by any of the reads
	for i := range maxReads {
		o.release()
		// The last copy is kept even when it changed: it is not streamed, so that its
		// header can be made from the fstat after reading (see direct.go).
		o = s.readOnce(ctx, it, i < maxReads-1, &relisted)
		if !errors.Is(o.warn, ErrChanged) {
			break
		}
	}
	if relisted != nil && o.staged != nil && o.warn == nil {
		o.warn = pathError(format.OpChanged, it.name, relisted)
	}
	if o.staged != nil && it.meta != nil && errors.Is(o.warn, ErrChanged) {
		// The last copy kept holds bytes from before a change its metadata (the fstat after
		// reading) shows: recorded without a change time, it is never reused as unchanged
		// (see Reference.join), and the next run reads the file again.
		it.meta.CtimeNsec = 0
	}
	return o
}

func (o *outcome) release() {
	if o.staged != nil {
		o.staged.data.Close()
		o.staged = nil
	}
	if o.held != nil {
		o.held.release()
		o.held = nil
	}
	if o.direct != nil && !o.direct.done {
		o.direct.rollback()
		o.direct = nil
	}
}

func (s *saver) readOnce(ctx context.Context, it *item, stream bool, relisted *error) outcome {
	name := it.name
	f, err := s.open(it.src, name)
	if errors.Is(err, syscall.ELOOP) {
		return outcome{skip: skiprules.KindSymlink}
	}
	if errors.Is(err, syscall.ENXIO) {
		// A socket (or a device node with no device behind it) swapped in since the walk's
		// lstat: open refuses it before fstat could say what it is.
		if info, lerr := it.src.Lstat(); lerr == nil && skiprules.KindOf(info.Mode()) != "" {
			return outcome{skip: skiprules.KindOf(info.Mode())}
		}
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return outcome{warn: pathError(oe.Op, name, oe.Err)}
	}
	if err != nil {
		return outcome{warn: pathError(format.OpOpen, name, err)}
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return outcome{warn: pathError(format.OpOpen, name, err)}
	}
	if !before.Mode().IsRegular() {
		return outcome{skip: kindOf(before.Mode())}
	}
	if !describes(it, before, s.ignoreInode) {
		*relisted = s.replaced(it, f)
	}
	attrsLost := s.refresh(it, f, name, before)
	var direct *directTo
	if stream {
		direct = s.direct
	}
	st, err := s.stage(ctx, name, f, before, direct)
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return outcome{warn: pathError(format.OpRead, name, re.err)}
		}
		return outcome{fatal: err}
	}
	after, err := f.Stat()
	if err != nil {
		st.data.Close()
		return outcome{warn: pathError(format.OpRead, name, err)}
	}
	st.info = after
	if c, ok := f.(Copied); ok {
		src := c.CopyOf()
		st.copyOf = &src
	}
	o := outcome{staged: st}
	if what := s.changes(before, after, st.size); what != "" {
		o.warn = &fs.PathError{Op: format.OpRead, Path: name, Err: fmt.Errorf("%w (%s)", ErrChanged, what)}
		if stream {
			return o // read again, this copy taken back
		}
		// The last read's copy is kept, with its mode from after: so with all the rest.
		attrsLost = s.refresh(it, f, name, after)
	}
	if attrsLost != nil {
		o.warn = attrsLost // the file is stored, without them: lost outranks changed
	}
	return o
}

// stage reads r once, feeding the CRC-32, the SHA-256 and the compressor from the same bytes.
// before is the fstat before reading. A large file goes straight into the archive once its
// turn comes, unless direct is nil.
func (s *saver) stage(ctx context.Context, name string, r io.Reader, before fs.FileInfo, direct *directTo) (*staged, error) {
	src := &reader{ctx: ctx, r: r, count: s.bytesRead}
	st := &staged{data: s.spools.newSpool()}
	crc, sum := crc32.NewIEEE(), sha256.New()
	hash := io.MultiWriter(crc, sum)
	buf := s.pool.getBuf()
	n, err := fill(src, buf, before.Size())
	switch {
	case src.err != nil:
		err = src.err
		s.pool.putBuf(buf)
	case err != nil: // the whole file is in buf
		hash.Write(buf[:n])
		st.size = int64(n)
		st.method, err = s.compressWhole(st.data, name, buf[:n])
		s.pool.putBuf(buf)
	default:
		st.data.out = direct.out(name, before, s.comp)
		st.method, st.size, err = s.compressLarge(st.data, buf, src, hash)
		if src.err != nil {
			err = src.err
		}
	}
	if err != nil {
		st.data.Close()
		return nil, err
	}
	st.crc = crc.Sum32()
	sum.Sum(st.sum[:0])
	return st, nil
}

// fill reads r into buf until buf is full or r ends. A file whose size fits in buf is done
// when one read returns that size: the read that would only say EOF is spared (a system call
// per small file), and a file that grew meanwhile is caught by the fstat after reading.
func fill(r io.Reader, buf []byte, size int64) (int, error) {
	n := 0
	if size < int64(len(buf)) {
		var err error
		n, err = r.Read(buf)
		if err == nil && int64(n) == size {
			err = io.EOF
		}
		if err != nil {
			return n, err
		}
	}
	m, err := io.ReadFull(r, buf[n:])
	return n + m, err
}

// compressWhole compresses a file that fits in one chunk, keeping whichever of the
// compressed and the plain bytes is smaller, as zip does. A file named like compressed data
// gets the trial first, which spares compressing a photo for nothing; for others the trial
// would cost more than it saves, most of them being text.
func (s *saver) compressWhole(dst io.Writer, name string, data []byte) (uint16, error) {
	if s.comp.stores() || hasCompressedExt(name) && !s.comp.worthCompressing(data) {
		_, err := dst.Write(data)
		return zip.Store, err
	}
	s.scratch.Reset()
	if err := s.comp.compress(&s.scratch, data, nil, true); err != nil {
		return 0, err
	}
	if s.scratch.Len() >= len(data) {
		_, err := dst.Write(data)
		return zip.Store, err
	}
	_, err := dst.Write(s.scratch.Bytes())
	if s.scratch.Cap() > 2*chunkSize { // do not keep one odd file's worth of memory
		s.scratch = bytes.Buffer{}
	}
	return s.comp.zipMethod(), err
}

// compressLarge compresses a file larger than one chunk, whose first chunk is first, in
// parallel through the chunk pool, which decides chunk by chunk how to compress (see
// compressChunk): a file that is partly compressed already (a disk image, a tar holding a
// video, a database with blobs) is compressed where it can be. It owns first.
func (s *saver) compressLarge(dst io.Writer, first []byte, src io.Reader, hash io.Writer) (uint16, int64, error) {
	if !s.comp.stores() {
		n, err := s.pool.compressStream(first, src, dst, hash)
		return s.comp.zipMethod(), n, err
	}
	defer s.pool.putBuf(first)
	hash.Write(first)
	if _, err := dst.Write(first); err != nil {
		return 0, 0, err
	}
	n, err := io.CopyBuffer(io.MultiWriter(dst, hash), src, first)
	return zip.Store, n + int64(len(first)), err
}

// reader tells a failed read of the source apart from a failed write of the spool, and
// stops at once when the run is interrupted.
type reader struct {
	ctx   context.Context
	r     io.Reader
	count *atomic.Int64
	err   error
}

type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, err
	}
	n, err := r.r.Read(p)
	r.count.Add(int64(n))
	if err != nil && err != io.EOF {
		r.err = &readError{err: err}
	}
	return n, err
}

func pathError(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func kindOf(mode fs.FileMode) skiprules.Kind {
	if k := skiprules.KindOf(mode); k != "" {
		return k
	}
	return skiprules.KindOther // a directory swapped in for a file
}

// describes reports whether the entry's metadata stands for opened, a file's fstat: the
// same device and inode (the inode left out when ignoreInode), and the same owner. The
// metadata was taken by the walk's lstat, or made again from a file an earlier read opened;
// it is the lstat's own when there is none.
func describes(it *item, opened fs.FileInfo, ignoreInode bool) bool {
	b, ok := opened.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	if m := it.meta; m != nil && m.Ino != 0 {
		return m.Dev == uint64(b.Dev) && (ignoreInode || m.Ino == b.Ino) && m.UID == b.Uid && m.GID == b.Gid
	}
	a, ok := it.info.Sys().(*syscall.Stat_t)
	return !ok || a.Dev == b.Dev && (ignoreInode || a.Ino == b.Ino) && a.Uid == b.Uid && a.Gid == b.Gid
}

// replaced takes the entry out of the listed file's hard-link group, the file opened f not
// being the one listed (renamed over, deleted and made again, chowned): restore would link
// the group's other names to it. Its metadata is made again by refresh. It returns what the
// warning says.
func (s *saver) replaced(it *item, f SourceFile) error {
	it.link = 0
	if !s.xattrs || it.meta == nil {
		return fmt.Errorf("%w; stored with its own owner", errReplacedSinceListed)
	}
	if _, ok := f.(xattrFile); !ok {
		it.meta.Xattrs = nil
		return fmt.Errorf("%w; stored with its own owner, without the extended attributes read from the file listed", errReplacedSinceListed)
	}
	return fmt.Errorf("%w; stored with its own owner and extended attributes", errReplacedSinceListed)
}

// xattrFile is a SourceFile whose extended attributes can be read through it (a
// *walker.File): those of the very file read.
type xattrFile interface {
	Xattrs() (map[string][]byte, error)
}

// refresh makes the entry's metadata the file's as info, an fstat of the open file f, shows
// it, when it is not already: the walk's lstat (or an earlier read) saw the file before it
// was written, chowned, chmodded or given other attributes, or saw another file. Bytes must
// never be stored with an owner, or attributes (a file capability, an ACL), that the file
// did not have together with them; the kernel drops a capability and setuid bits on a
// write, and a chmod rewrites an ACL. The attributes are read again through f; the check
// after reading covers them, since changing any moves the change time. An error is the
// warning for attributes that could not be read, naming the entry name.
func (s *saver) refresh(it *item, f SourceFile, name string, info fs.FileInfo) error {
	m := it.meta
	if m == nil || s.holds(m, info) {
		return nil
	}
	xattrs := m.Xattrs
	*m = FileMetaOf(info)
	if s.owners != nil {
		s.owners.Name(m)
	}
	m.Xattrs = xattrs
	if x, ok := f.(xattrFile); ok && s.xattrs {
		attrs, err := x.Xattrs()
		m.Xattrs = attrs
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pathError(format.OpXattr, name, pe.Err) // lost, as in the walk
		}
	}
	return nil
}

// holds reports whether m, the metadata an entry would be stored with, is that of the file
// whose fstat is info. Its change time moves with anything else the metadata holds; with
// IgnoreCtime, when it cannot be trusted to, the attributes are always read again.
func (s *saver) holds(m *format.Meta, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	if s.ignoreCtime && s.xattrs {
		return false
	}
	return m.UID == st.Uid && m.GID == st.Gid && m.Dev == uint64(st.Dev) && m.Ino == st.Ino &&
		m.CtimeNsec == st.Ctim.Nano() && m.MtimeNsec == info.ModTime().Nanosecond()
}

// changes says what moved between before and after, the fstat before and after reading a
// file of which n bytes were read; "" when nothing did. The change time is left out with
// IgnoreCtime; it moves on a write, a change of owner, mode or attributes, and a new link.
func (s *saver) changes(before, after fs.FileInfo, n int64) string {
	var what []string
	if after.Size() != before.Size() || n != after.Size() {
		what = append(what, fmt.Sprintf("size %d, then %d bytes; %d read", before.Size(), after.Size(), n))
	}
	if !after.ModTime().Equal(before.ModTime()) {
		what = append(what, "mtime moved")
	}
	if after.Mode() != before.Mode() {
		what = append(what, fmt.Sprintf("mode %v, then %v", before.Mode(), after.Mode()))
	}
	b, okb := before.Sys().(*syscall.Stat_t)
	a, oka := after.Sys().(*syscall.Stat_t)
	if okb && oka {
		if a.Uid != b.Uid || a.Gid != b.Gid {
			what = append(what, fmt.Sprintf("owner %d:%d, then %d:%d", b.Uid, b.Gid, a.Uid, a.Gid))
		}
		if len(what) == 0 && !s.ignoreCtime && a.Ctim != b.Ctim {
			what = append(what, "its change time moved: written with its mtime put back, or given another link or attributes")
		}
	}
	return strings.Join(what, "; ")
}

// errReplacedSinceListed says that the file at a name was not the one the walk listed there
// (renamed over, or deleted and made again), or had another owner, when it was opened.
var errReplacedSinceListed = errors.New("replaced by another file, or given another owner, since the walk listed it")
