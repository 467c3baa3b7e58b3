package backupset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAcquireExclusive(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file, so a second open in this process contends as
	// another process would.
	_, err = Acquire(t.Context(), Folder{dir}, 0)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Pid != os.Getpid() {
		t.Fatalf("second Acquire: %v; want a LockedError naming pid %d", err, os.Getpid())
	}
	if want := "another backup of this set is running, pid "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want %q…", err, want)
	}
	start := time.Now()
	_, err = Acquire(t.Context(), Folder{dir}, 300*time.Millisecond)
	if !errors.As(err, &locked) || time.Since(start) < 300*time.Millisecond {
		t.Errorf("Acquire with a wait: %v after %v; want LockedError after the wait", err, time.Since(start))
	}
	time.AfterFunc(200*time.Millisecond, func() { first.Release() })
	second, err := Acquire(t.Context(), Folder{dir}, 10*time.Second)
	if err != nil {
		t.Fatalf("Acquire waiting for a release: %v", err)
	}
	second.Release()
}

func TestAcquireCancelled(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := Acquire(ctx, Folder{dir}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire: %v, want context.Canceled", err)
	}
}

func TestAcquireRefusesOddLockFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"symlink", func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(path), "target"), path); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is not a regular file"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.make(t, filepath.Join(dir, LockName))
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err == nil {
				l.Release()
				t.Fatal("Acquire succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), LockName) {
				t.Errorf("error %q, want the lock's path and %q", err, tt.want)
			}
			if exists(filepath.Join(dir, "target")) {
				t.Error("the symlink's target was created")
			}
		})
	}
}

func TestAcquireStaleFile(t *testing.T) {
	dir := t.TempDir()
	// A crashed run leaves its pid in the file, but the kernel dropped its lock.
	writeFile(t, filepath.Join(dir, LockName), "999999\n")
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatalf("Acquire over a stale lock file: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, LockName))
	if got := strings.TrimSpace(string(data)); got != itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want our pid", got)
	}
	l.Release()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestLockFileMode(t *testing.T) {
	// Who may write the set's folder may lock it, no one else; a lock file that others may
	// open (one an older version made 0644) is given that mode by a run that owns it.
	for _, tt := range []struct{ dir, want os.FileMode }{
		{0o755, 0o600}, {0o700, 0o600}, {0o775, 0o660}, {0o777, 0o666}, {os.ModeSticky | 0o777, 0o666},
	} {
		for _, before := range []os.FileMode{0, 0o644, 0o666, 0o600} {
			dir := filepath.Join(t.TempDir(), "set")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, LockName)
			if before != 0 {
				writeFile(t, path, "")
				if err := os.Chmod(path, before); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != tt.want {
				t.Errorf("folder %v, lock file %v: %v after a run (%v), want %v", tt.dir, before, info.Mode().Perm(), err, tt.want)
			}
		}
	}
}

// rawLock locks the lock file at path as a process without the guard would (flock(1)).
func rawLock(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLockFileReplacedWhileWaiting: a run that waits on a lock file that is then removed, and
// another process creates and locks a new one, must not take the set when the old file is
// released: it locks the file the name leads to now.
func TestLockFileReplacedWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockName)
	old := rawLock(t, path)
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(t.Context(), Folder{dir}, 10*time.Second)
		if err == nil {
			defer l.Release()
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // the waiter holds the old file open
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	replaced := rawLock(t, path)
	old.Close()
	select {
	case err := <-got:
		t.Fatalf("the waiter took the set while another process held its lock file: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	replaced.Close()
	if err := <-got; err != nil {
		t.Errorf("the waiter after the holder of the new file released it: %v", err)
	}
}

// TestLockFileRemovedWhileHeld: the holder puts a locked file back at the lock's name as
// soon as it is removed or replaced, so that a new run finds the set locked.
func TestLockFileRemovedWhileHeld(t *testing.T) {
	for _, replace := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, LockName)
		first, err := Acquire(t.Context(), Folder{dir}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if replace {
			writeFile(t, filepath.Join(dir, "new"), "")
			err = os.Rename(filepath.Join(dir, "new"), path)
		} else {
			err = os.Remove(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the guard reacts
		var locked *LockedError
		if l, err := Acquire(t.Context(), Folder{dir}, 0); !errors.As(err, &locked) {
			if err == nil {
				l.Release()
			}
			t.Errorf("replace %v: a run after the lock file was taken away: %v, want a LockedError", replace, err)
		}
		if err := first.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
		second, err := Acquire(t.Context(), Folder{dir}, 0)
		if err != nil {
			t.Fatalf("a run after the release: %v", err)
		}
		second.Release()
	}
}
