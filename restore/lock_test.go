package restore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLockDest: a second LockDest of the same folder (another open file description, as
// another process's is, also by another path to it) is a *BusyError until the first is
// released; the descriptor is close-on-exec.
func TestLockDest(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dest", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	first, err := LockDest(dest)
	if err != nil || first.Unlocked != nil || first.fd < 0 {
		t.Fatalf("LockDest: %v, %+v", err, first)
	}
	if flags, err := unix.FcntlInt(uintptr(first.fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("lock descriptor flags %#x, %v: want close-on-exec", flags, err)
	}
	for _, other := range []string{dest, dest + "/.", filepath.Join(dir, "link")} {
		_, err := LockDest(other)
		var busy *BusyError
		if !errors.As(err, &busy) || busy.Dest != other {
			t.Errorf("LockDest(%s) while held: %v, want a *BusyError naming it", other, err)
		}
	}
	first.Release()
	again, err := LockDest(dest)
	if err != nil {
		t.Fatalf("LockDest after Release: %v", err)
	}
	again.Release()
}

// TestLockDestMadeRemoved: a DEST LockDest made (with the folders above it) is removed
// again on Release when no Run wrote into it; one that existed stays.
func TestLockDestMadeRemoved(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "a", "b", "dest")
	l, err := LockDest(dest)
	if err != nil || len(l.made) != 3 {
		t.Fatalf("LockDest: %v, made %q; want a/b/dest made", err, l.made)
	}
	if _, err := os.Stat(dest); err != nil {
		t.Fatalf("DEST not made: %v", err)
	}
	l.Release()
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Release of an unused lock: %v; want a removed", err)
	}
	used, err := LockDest(dest)
	if err != nil {
		t.Fatal(err)
	}
	used.used.Store(true)
	used.Release()
	if _, err := os.Stat(dest); err != nil {
		t.Errorf("a DEST Run wrote into was removed: %v", err)
	}
}

// TestLockDestMoved: Moved says when DEST's path leads to another folder than the locked.
func TestLockDestMoved(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	l, err := LockDest(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Moved(); err != nil {
		t.Errorf("Moved: %v, want nil", err)
	}
	if err := os.Rename(dest, dest+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.Moved(); !errors.Is(err, errDestMoved) {
		t.Errorf("Moved after the swap: %v, want errDestMoved", err)
	}
}
