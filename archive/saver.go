package archive

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"sync/atomic"
	"syscall"

	"backup/skiprules"
	"backup/walker"
)

// Ops named in the *fs.PathError values the archiver reports; they are the receipt's "op"
// values. A vanished file is reported with its op and fs.ErrNotExist.
const (
	OpOpen = walker.OpOpen
	OpRead = "read"
)

// ErrChanged is the cause of a warning for a file that kept changing while it was read. The
// last copy read is archived.
var ErrChanged = errors.New("changed while being read")

// maxReads is how often a changing file is read before its last copy is kept.
const maxReads = 3

// staged is one file read and compressed, waiting for its turn to be written.
type staged struct {
	info   fs.FileInfo // fstat after reading
	method uint16
	crc    uint32
	sum    [sha256.Size]byte
	size   int64
	data   *spool
}

// outcome is what became of one file: staged (perhaps with a warning), skipped, or lost.
type outcome struct {
	staged *staged
	skip   skiprules.Kind
	warn   error
	fatal  error
}

// saver reads files; one per worker goroutine.
type saver struct {
	level     int
	spoolDir  string
	spoolMem  int
	bytesRead *atomic.Int64
	comp      *compressor
}

func (s *saver) save(ctx context.Context, path, name string) outcome {
	var o outcome
	for range maxReads {
		o.release()
		o = s.readOnce(ctx, path, name)
		if !errors.Is(o.warn, ErrChanged) {
			return o
		}
	}
	return o
}

func (o *outcome) release() {
	if o.staged != nil {
		o.staged.data.Close()
		o.staged = nil
	}
}

func (s *saver) readOnce(ctx context.Context, path, name string) outcome {
	f, err := walker.Open(path)
	if errors.Is(err, syscall.ELOOP) {
		return outcome{skip: skiprules.KindSymlink}
	}
	if err != nil {
		return outcome{warn: pathError(OpOpen, name, err)}
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return outcome{warn: pathError(OpOpen, name, err)}
	}
	if !before.Mode().IsRegular() {
		return outcome{skip: kindOf(before.Mode())}
	}
	st, err := s.stage(ctx, f)
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return outcome{warn: pathError(OpRead, name, re.err)}
		}
		return outcome{fatal: err}
	}
	after, err := f.Stat()
	if err != nil {
		st.data.Close()
		return outcome{warn: pathError(OpRead, name, err)}
	}
	st.info = after
	o := outcome{staged: st}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || st.size != after.Size() {
		o.warn = &fs.PathError{Op: OpRead, Path: name, Err: fmt.Errorf("%w (size %d, then %d bytes; %d read)",
			ErrChanged, before.Size(), after.Size(), st.size)}
	}
	return o
}

// stage reads r once, feeding the CRC-32, the SHA-256 and the compressor from the same bytes.
func (s *saver) stage(ctx context.Context, r io.Reader) (*staged, error) {
	sp := newSpool(s.spoolDir, s.spoolMem)
	st := &staged{method: zip.Deflate, data: sp}
	if s.level == 0 {
		st.method = zip.Store
	}
	crc := crc32.NewIEEE()
	sum := sha256.New()
	w, err := s.comp.open(sp, s.level)
	if err != nil {
		return nil, err
	}
	src := &reader{ctx: ctx, r: r, count: s.bytesRead}
	n, err := io.Copy(io.MultiWriter(w, crc, sum), src)
	if err == nil {
		err = w.Close()
	}
	if src.err != nil {
		err = src.err
	}
	if err != nil {
		sp.Close()
		return nil, err
	}
	st.size = n
	st.crc = crc.Sum32()
	sum.Sum(st.sum[:0])
	return st, nil
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
