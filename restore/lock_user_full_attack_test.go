package restore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackLockUserFolderFull: the user's folder for locks is there and his alone, but
// its file system has no inode left (root's /run is a tmpfs that anyone may fill through
// /run/lock, mode 1777, on many systems). The lock file cannot be made, lockUser gives no
// lock and no error, and two restores by the same user into one DEST both go on: with a
// reader holding DEST's flock, which both ignore, they interleave, the very voiding the
// user's lock is for (the warning says "restored without the lock"). Right: the second is
// refused, without refusing restores when no one else runs: a restore that cannot make its
// file holds the folder of locks alone, and every restore holds it shared.
func TestAttackLockUserFolderFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	locks := fullLockDir(t)
	withUserLockDir(t, locks)
	st := statOf(t, t.TempDir())
	first, err := lockUser(st)
	if err != nil || first == nil {
		t.Fatalf("first lockUser on a full folder: %v, %v; want a lock", first, err)
	}
	if second, err := lockUser(st); !errors.Is(err, errUserLockBusy) {
		second.release()
		t.Errorf("second lockUser on a full folder while the first runs: %v, %v; want busy", second, err)
	}
	other := statOf(t, t.TempDir())
	if third, err := lockUser(other); !errors.Is(err, errUserLockBusy) {
		third.release()
		t.Errorf("lockUser into another folder on a full folder while the first runs: %v, %v; want busy", third, err)
	}
	first.release()
	again, err := lockUser(st)
	if err != nil || again == nil {
		t.Fatalf("lockUser on a full folder once the first ended: %v, %v; want a lock", again, err)
	}
	again.release()
}

// fullLockDir is a folder for locks, the user's alone, on a file system with no inode left.
func fullLockDir(t *testing.T) string {
	t.Helper()
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "tmpfs", 0, "size=64k,nr_inodes=3,mode=0755"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	locks := filepath.Join(mnt, "backup")
	if err := os.Mkdir(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ { // take every inode left
		if err := os.WriteFile(filepath.Join(mnt, "fill"+string(rune('a'+i))), nil, 0o644); err != nil {
			break
		}
	}
	return locks
}

// TestAttackLockDestFullFolderRefusedLeavesDest: a restore into a missing DEST, refused by
// the user's lock (another of his restores holds the full folder of locks alone), left the
// DEST it had made, empty: a refused restore leaves nothing made.
func TestAttackLockDestFullFolderRefusedLeavesDest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	withUserLockDir(t, fullLockDir(t))
	first, err := lockUser(statOf(t, t.TempDir()))
	if err != nil || first == nil {
		t.Fatalf("lockUser on a full folder: %v, %v; want a lock", first, err)
	}
	defer first.release()
	dest := filepath.Join(t.TempDir(), "new", "dest")
	l, err := LockDest(dest)
	var busy *BusyError
	if !errors.As(err, &busy) {
		l.Release()
		t.Fatalf("LockDest while the folder of locks is held alone: %v; want busy", err)
	}
	if _, err := os.Lstat(filepath.Dir(dest)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the refusal %s: %v; want removed again", filepath.Dir(dest), err)
	}
}

// TestAttackLockDestFullFolderSaysWhy: a restore refused because another of the user's
// restores, into another folder, holds his full folder of locks alone said "another restore
// is writing into it", which nothing was; it says no lock file could be made there.
func TestAttackLockDestFullFolderSaysWhy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	locks := fullLockDir(t)
	withUserLockDir(t, locks)
	first, err := lockUser(statOf(t, t.TempDir()))
	if err != nil || first == nil {
		t.Fatalf("lockUser on a full folder: %v, %v; want a lock", first, err)
	}
	defer first.release()
	dest := t.TempDir()
	l, err := LockDest(dest)
	if err == nil {
		l.Release()
	}
	want := dest + ": another restore is running and no lock file could be made in " + locks + ", so restores run one at a time; try again when it ends"
	if err == nil || err.Error() != want {
		t.Errorf("LockDest while another holds the full folder of locks: %v; want %q", err, want)
	}
}

// TestAttackLockUserFolderReadOnly: the user's folder of locks on a read-only file system
// (a service run with ProtectSystem=strict sees /run so) gave no lock, as a full one did;
// the user's restores run one at a time there too.
func TestAttackLockUserFolderReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "tmpfs", 0, "size=64k,mode=0755"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	locks := filepath.Join(mnt, "backup")
	if err := os.Mkdir(locks, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("none", mnt, "tmpfs", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	withUserLockDir(t, locks)
	st := statOf(t, t.TempDir())
	first, err := lockUser(st)
	if err != nil || first == nil {
		t.Fatalf("lockUser on a read-only folder: %v, %v; want a lock", first, err)
	}
	defer first.release()
	if second, err := lockUser(st); !errors.Is(err, errUserLockBusy) {
		second.release()
		t.Errorf("second lockUser on a read-only folder while the first runs: %v, %v; want busy", second, err)
	}
}
