package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, make func(path string) error) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := make(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	file := mk("file", func(p string) error { return os.WriteFile(p, []byte("12345"), 0o644) })
	tests := []struct {
		name, path string
		limit      int64
		want       string // the content, or a part of the error
	}{
		{"regular", file, 5, "12345"},
		{"over the limit", file, 4, "larger than 4 bytes"},
		{"symlink", mk("link", func(p string) error { return os.Symlink(file, p) }), 5, "is a symlink"},
		{"fifo", mk("fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }), 5, "is not a regular file"},
		{"directory", mk("dir", func(p string) error { return os.Mkdir(p, 0o755) }), 5, "is a directory"},
		{"missing", filepath.Join(dir, "missing"), 5, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReadRegular(tt.path, tt.limit)
			if err == nil {
				if string(data) != tt.want {
					t.Errorf("read %q, want %q", data, tt.want)
				}
				return
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a PathError on %s saying %q", err, tt.path, tt.want)
			}
		})
	}
}
