package restore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// withUserLockDir makes the user's folder for locks dir for the test.
func withUserLockDir(t *testing.T, dir string) {
	old := userLockDir
	userLockDir = func() string { return dir }
	t.Cleanup(func() { userLockDir = old })
}

func statOf(t *testing.T, path string) *unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// TestLockUser: the user's lock on a folder is taken once; a second try is busy until the
// first is released, which removes its file; a file left by a killed restore is reused.
func TestLockUser(t *testing.T) {
	locks := filepath.Join(t.TempDir(), "locks")
	withUserLockDir(t, locks)
	st := statOf(t, t.TempDir())
	first, err := lockUser(st)
	if err != nil || first == nil {
		t.Fatalf("lockUser: %v, %v", first, err)
	}
	if fi, err := os.Stat(locks); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("folder of locks: %v, %v; want made 0700", fi, err)
	}
	if again, err := lockUser(st); !errors.Is(err, errUserLockBusy) {
		t.Errorf("lockUser while held: %v, %v; want busy", again, err)
	}
	first.release()
	if names, _ := os.ReadDir(locks); len(names) != 0 {
		t.Errorf("left after release: %v", names)
	}
	if err := os.WriteFile(filepath.Join(locks, first.name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := lockUser(st)
	if err != nil || again == nil {
		t.Fatalf("lockUser over a file left behind: %v, %v", again, err)
	}
	again.release()
}

// TestLockUserFolderNotHisAlone: a folder for locks that another may write into or open, or that
// is not a folder of the user's own, is not used: no lock, no error (DEST's flock alone).
func TestLockUserFolderNotHisAlone(t *testing.T) {
	st := statOf(t, t.TempDir())
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(base, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	readable := filepath.Join(base, "readable") // anyone may open it, and flock it
	if err := os.Mkdir(readable, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(readable, 0o744); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink("own", link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"world-writable": open, "world-readable": readable, "a symlink": link, "none": "", "unmakeable": filepath.Join(base, "missing", "x")}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases["another user's"] = other
	}
	for name, dir := range cases {
		withUserLockDir(t, dir)
		if l, err := lockUser(st); l != nil || err != nil {
			t.Errorf("%s folder for locks: %v, %v; want no lock", name, l, err)
			l.release()
		}
	}
}

// TestLockUserNameReplaced: a lock file whose name leads to another file once locked (its
// holder removed it as it ended, and another restore made a new one) is not the lock.
func TestLockUserNameReplaced(t *testing.T) {
	dir := t.TempDir()
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	path := filepath.Join(dir, "l")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	named := func() bool {
		same, _ := sameFileAt(dirfd, "l", unix.AT_SYMLINK_NOFOLLOW, fd)
		return same
	}
	if !named() {
		t.Fatal("sameFileAt of the file itself: false")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if named() {
		t.Error("sameFileAt of a removed name: true")
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if named() {
		t.Error("sameFileAt of a name made anew: true")
	}
}

// TestAttackLockUserReleaseRemovesAnothersFile: a lock file removed or renamed while its
// restore held it (rm by hand, a cleaner of /run) lets a second restore make a new one and
// lock it; the first, as it ended, removed that second restore's file by its name, and a
// third restore then made a third file and ran alongside the second. Release removes the
// name only while it still leads to the file it holds.
func TestAttackLockUserReleaseRemovesAnothersFile(t *testing.T) {
	locks := filepath.Join(t.TempDir(), "locks")
	withUserLockDir(t, locks)
	st := statOf(t, t.TempDir())
	first, err := lockUser(st)
	if err != nil || first == nil {
		t.Fatalf("lockUser: %v, %v", first, err)
	}
	if err := os.Rename(filepath.Join(locks, first.name), filepath.Join(locks, "moved")); err != nil {
		t.Fatal(err)
	}
	second, err := lockUser(st)
	if err != nil || second == nil {
		t.Fatalf("lockUser once the first's file was moved: %v, %v", second, err)
	}
	defer second.release()
	first.release()
	if third, err := lockUser(st); !errors.Is(err, errUserLockBusy) {
		third.release()
		t.Errorf("lockUser while the second holds it, after the first ended: %v, %v; want busy", third, err)
	}
	if _, err := os.Lstat(filepath.Join(locks, "moved")); err != nil {
		t.Errorf("the first's own file, moved: %v; want left where it was moved (not its name)", err)
	}
}

// TestAttackLockUserFolderInAnothersFolder: $XDG_RUNTIME_DIR set to a folder another user
// owns (a shared or mistyped path): the folder for locks made in it was the user's own,
// 0700, and used, but its parent's owner may rename it away while a restore holds a lock
// in it, and the user's next restore makes a new one, with no lock in it, and runs
// alongside. A folder for locks is used only when its parent is root's or the user's, and
// others may not rename what is in it (not writable by them, or sticky as /tmp is).
func TestAttackLockUserFolderInAnothersFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	parent := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(parent, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open") // root's, but anyone may rename in it
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	st := statOf(t, t.TempDir())
	for _, dir := range []string{parent, open} {
		withUserLockDir(t, filepath.Join(dir, "backup"))
		if l, err := lockUser(st); l != nil || err != nil {
			l.release()
			t.Errorf("folder for locks in %s (mode %o): %v, %v; want no lock", dir, statOf(t, dir).Mode, l, err)
		}
	}
	sticky := filepath.Join(t.TempDir(), "sticky") // as /tmp: others cannot rename ours
	if err := os.Mkdir(sticky, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	withUserLockDir(t, filepath.Join(sticky, "backup"))
	l, err := lockUser(st)
	if l == nil || err != nil {
		t.Errorf("folder for locks in a sticky folder: %v, %v; want a lock", l, err)
	}
	l.release()
}
