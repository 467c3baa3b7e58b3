//go:build unix

package skiprules

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestIsCacheDirSpecialTag(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, tag string)
	}{
		// A symlink does not count, even to a valid tag: a link could
		// point anywhere, and the spec asks for a file.
		{"symlink to valid tag", func(t *testing.T, tag string) {
			t.Helper()
			target := filepath.Join(t.TempDir(), "real")
			if err := os.WriteFile(target, []byte(validTag), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, tag); err != nil {
				t.Fatal(err)
			}
		}},
		// A FIFO must be refused without being opened for a blocking
		// read; if it were, this test would hang.
		{"fifo", func(t *testing.T, tag string) {
			t.Helper()
			if err := syscall.Mkfifo(tag, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, filepath.Join(dir, CacheDirTagName))
			if isCacheDir(t, dir) {
				t.Error("IsCacheDir = true, want false")
			}
		})
	}
}
