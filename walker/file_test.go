package walker

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRawFIFO: a FIFO swapped in for a file opens without blocking, and fstat says what
// it is before anything reads it.
func TestOpenRawFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Handle{parent: testDir(t, dir), base: "fifo"}.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("fstat: %v, %v; want a FIFO", info, err)
	}
}

func TestOpenRawReads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	d := testDir(t, dir)
	if _, err := (Handle{parent: d, base: "link"}).OpenRaw(); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("OpenRaw of a symlink: %v, want ELOOP", err)
	}
	f, err := Handle{parent: d, base: "f"}.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil || info.Size() != 5 || !info.Mode().IsRegular() {
		t.Errorf("fstat: %v, %v; want a regular file of 5 bytes", info, err)
	}
	data, err := io.ReadAll(f)
	if string(data) != "hello" || err != nil {
		t.Errorf("read %q, %v; want hello", data, err)
	}
	if n, err := f.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("read at the end: %d, %v; want 0, EOF", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}
