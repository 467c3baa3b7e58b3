package backupset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMarker: a folder is a set's by its lock file or a LATEST that names a run; a file
// merely named LATEST (junk, too long, a FIFO, a symlink to a pointer) makes none, and a
// FIFO is never waited on. Marker (by a listing) and MarkerAt (by a descriptor) agree.
func TestMarker(t *testing.T) {
	pointer := "app-20261206T131238Z.zip\n"
	cases := []struct {
		name string
		make func(t *testing.T, dir string)
		want string
	}{
		{"empty", func(*testing.T, string) {}, ""},
		{"lock", func(t *testing.T, dir string) { write(t, dir, LockName, "") }, LockName},
		{"pointer", func(t *testing.T, dir string) { write(t, dir, LatestName, pointer) }, LatestName},
		{"release name", func(t *testing.T, dir string) { write(t, dir, LatestName, "v1.2.3\n") }, ""},
		{"too long", func(t *testing.T, dir string) { write(t, dir, LatestName, strings.Repeat("a", maxPointer+1)) }, ""},
		{"fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, LatestName), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"symlink to a pointer", func(t *testing.T, dir string) {
			write(t, dir, "p", pointer)
			if err := os.Symlink("p", filepath.Join(dir, LatestName)); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"lock and junk", func(t *testing.T, dir string) {
			write(t, dir, LockName, "")
			write(t, dir, LatestName, "junk")
		}, LockName},
	}
	for _, c := range cases {
		dir := t.TempDir()
		c.make(t, dir)
		if got := (Folder{Dir: dir}).Marker(context.Background()); got != c.want {
			t.Errorf("%s: Marker = %q, want %q", c.name, got, c.want)
		}
		dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := MarkerAt(dfd); got != c.want {
			t.Errorf("%s: MarkerAt = %q, want %q", c.name, got, c.want)
		}
		unix.Close(dfd)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
