package archive

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"backup/atomicfile"
)

// spoolConfig is shared by the spools of one Writer: where they spill, and the memory they
// may hold together. The shared budget lets many small entries wait in memory behind a slow
// one, while the total stays bounded whatever the tree.
type spoolConfig struct {
	dir    string
	limit  int          // bytes one spool holds in memory at most
	budget atomic.Int64 // bytes all spools may still take in memory
}

func newSpoolConfig(dir string, limit int, budget int64) *spoolConfig {
	c := &spoolConfig{dir: dir, limit: limit}
	c.budget.Store(budget)
	return c
}

func (c *spoolConfig) newSpool() *spool { return &spool{cfg: c} }

// take reserves n bytes of the budget, if they are there.
func (c *spoolConfig) take(n int) bool {
	if c.budget.Add(-int64(n)) < 0 {
		c.budget.Add(int64(n))
		return false
	}
	return true
}

// spool holds one entry's compressed bytes until the writer's turn comes: in memory while
// the budget allows, then in an unlinked temp file, so that memory stays bounded whatever
// the file size and nothing is left on disk by a crash.
type spool struct {
	cfg  *spoolConfig
	mem  bytes.Buffer
	file *os.File
	size int64
	// out, when set, takes the bytes straight into the archive once the entry's turn comes
	// (see direct.go).
	out *directOut
}

func (s *spool) Write(p []byte) (int, error) {
	if s.out != nil && s.out.ready() {
		return s.writeDirect(p)
	}
	if s.file == nil && (s.mem.Len()+len(p) > s.cfg.limit || !s.cfg.take(len(p))) {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	var n int
	var err error
	if s.file != nil {
		n, err = s.file.Write(p)
		err = spoolErr(s.cfg.dir, err)
	} else {
		n, err = s.mem.Write(p)
	}
	s.size += int64(n)
	return n, err
}

func (s *spool) writeDirect(p []byte) (int, error) {
	if !s.out.on {
		if err := s.out.begin(s); err != nil {
			return 0, err
		}
	}
	n, err := s.out.w.out.Write(p)
	s.size += int64(n)
	return n, err
}

// streamed says whether the bytes went into the archive.
func (s *spool) streamed() bool { return s.out != nil && s.out.on }

func (s *spool) spill() error { return spoolErr(s.cfg.dir, s.spillFile()) }

func (s *spool) spillFile() error {
	f, err := atomicfile.CreateUnnamed(s.cfg.dir)
	if err != nil {
		return err
	}
	if _, err := f.Write(s.mem.Bytes()); err != nil {
		f.Close()
		return err
	}
	s.freeMem()
	s.file = f
	return nil
}

func (s *spool) freeMem() {
	s.cfg.budget.Add(int64(s.mem.Len()))
	s.mem = bytes.Buffer{}
}

// copyTo copies the spooled bytes to w, a spilled spool through buf: io.Copy's 32 KiB
// reads made a syscall per 32 KiB of a large file.
func (s *spool) copyTo(w io.Writer, buf []byte) (int64, error) {
	if s.file == nil {
		n, err := w.Write(s.mem.Bytes())
		return int64(n), err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.CopyBuffer(w, onlyReader{s.file}, buf)
}

// drop releases the spool's memory and temp file.
func (s *spool) drop() {
	s.freeMem()
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
}

// Close releases the spool's memory and temp file, and takes back what it wrote into the
// archive unless that entry was finished.
func (s *spool) Close() error {
	s.drop()
	if s.streamed() && !s.out.done {
		s.out.rollback()
	}
	return nil
}

// SpoolError is the failure of a spool, an unlinked temp file in Dir: for a streamed or an
// encrypted archive Dir is $TMPDIR, of which the archive's path says nothing, and a full
// $TMPDIR was told as "writing archive -: no space left on device".
type SpoolError struct {
	Dir string
	Err error
}

func (e *SpoolError) Error() string { return "spooling in " + e.Dir + ": " + e.Err.Error() }

func (e *SpoolError) Unwrap() error { return e.Err }

// spoolErr is err, a spool's failure in dir, as a SpoolError without the temp file's name,
// which is unlinked at once and would tell nobody anything.
func spoolErr(dir string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &SpoolError{Dir: dir, Err: err}
}
