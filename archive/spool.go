package archive

import (
	"bytes"
	"io"
	"os"
)

// spool holds one entry's compressed bytes until the writer's turn comes: in memory up to a
// limit, then in an unlinked temp file, so that memory stays bounded whatever the file size
// and nothing is left on disk by a crash.
type spool struct {
	mem   bytes.Buffer
	file  *os.File
	limit int
	dir   string
	size  int64
}

func newSpool(dir string, limit int) *spool {
	return &spool{dir: dir, limit: limit}
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) > s.limit {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	var n int
	var err error
	if s.file != nil {
		n, err = s.file.Write(p)
	} else {
		n, err = s.mem.Write(p)
	}
	s.size += int64(n)
	return n, err
}

func (s *spool) spill() error {
	f, err := os.CreateTemp(s.dir, ".backup-spool-*")
	if err != nil {
		return err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(s.mem.Bytes()); err != nil {
		f.Close()
		return err
	}
	s.mem = bytes.Buffer{}
	s.file = f
	return nil
}

// WriteTo copies the spooled bytes to w.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if s.file == nil {
		return s.mem.WriteTo(w)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.file)
}

// Close releases the spool's memory and temp file.
func (s *spool) Close() error {
	s.mem = bytes.Buffer{}
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}
