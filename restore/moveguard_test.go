package restore

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// guarded returns a guard of a new folder holding the folder a (opened and watched, as
// destTree does), and the folder's path.
func guarded(t *testing.T) (*moveGuard, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	rfd := openDir(t, root)
	g := newMoveGuard(rfd)
	t.Cleanup(g.close)
	if g.tripped.Load() {
		t.Skipf("no move guard on %s", root)
	}
	afd := openDir(t, filepath.Join(root, "a"))
	var st unix.Stat_t
	if err := unix.Fstat(afd, &st); err != nil {
		t.Fatal(err)
	}
	g.watch(afd, uint64(st.Dev))
	if !quiet(g) {
		t.Fatal("a new guard is not quiet")
	}
	return g, root
}

// quiet is g.quiet without its count of mount changes.
func quiet(g *moveGuard) bool {
	_, ok := g.quiet()
	return ok
}

func openDir(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestMoveGuardFiles: files made, renamed into place and removed in watched folders (what a
// restore does itself) leave the guard quiet.
func TestMoveGuardFiles(t *testing.T) {
	g, root := guarded(t)
	for _, dir := range []string{root, filepath.Join(root, "a")} {
		tmp, name := filepath.Join(dir, ".f.tmp"), filepath.Join(dir, "f")
		if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, name); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
			t.Fatal(err)
		}
		os.Remove(name)
		if !quiet(g) {
			t.Fatalf("files made, renamed and removed in %s tripped the guard", dir)
		}
	}
}

// TestMoveGuardFolders: every way a watched folder can leave its name trips the guard, for
// good; a folder removed, or renamed over, while open may leave it quiet, but is dead:
// nothing can be made in it any more.
func TestMoveGuardFolders(t *testing.T) {
	for name, move := range map[string]func(root string) error{
		"renamed": func(root string) error { return os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")) },
		"moved out": func(root string) error {
			return os.Rename(filepath.Join(root, "a"), filepath.Join(t.TempDir(), "a"))
		},
		"removed": func(root string) error { return os.Remove(filepath.Join(root, "a")) },
		"renamed over": func(root string) error {
			os.Mkdir(filepath.Join(root, "b"), 0o755)
			return unix.Rename(filepath.Join(root, "b"), filepath.Join(root, "a")) // os.Rename refuses a folder as the new name
		},
		"exchanged with a symlink": func(root string) error {
			os.Symlink("/", filepath.Join(root, "l"))
			return unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "a"), unix.AT_FDCWD, filepath.Join(root, "l"), unix.RENAME_EXCHANGE)
		},
		"its parent moved": func(root string) error {
			return os.Rename(root, root+".moved")
		},
	} {
		t.Run(name, func(t *testing.T) {
			g, root := guarded(t)
			afd := openDir(t, filepath.Join(root, "a"))
			if err := move(root); err != nil {
				t.Fatal(err)
			}
			if quiet(g) {
				fd, err := unix.Openat(afd, "f", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
				if err == nil {
					unix.Close(fd)
					t.Fatal("the guard stayed quiet, and the folder takes new files")
				}
				return
			}
			if quiet(g) {
				t.Fatal("the guard was quiet again")
			}
		})
	}
}

// TestMoveGuardUntrusted: on a file system whose changes may come from elsewhere, and for a
// folder on another device (a mount inside the destination), the guard is tripped.
func TestMoveGuardUntrusted(t *testing.T) {
	if g := newMoveGuard(openDir(t, "/proc/self")); !g.tripped.Load() {
		t.Error("a guard of a folder in /proc was not tripped")
	}
	g, root := guarded(t)
	var here, shm unix.Stat_t
	if unix.Stat(root, &here) != nil || unix.Stat("/dev/shm", &shm) != nil || here.Dev == shm.Dev {
		t.Skip("no folder on another device at /dev/shm")
	}
	g.watch(openDir(t, "/dev/shm"), uint64(shm.Dev))
	if quiet(g) {
		t.Error("a folder on another device left the guard quiet")
	}
}

// TestMoveGuardWatchLimit: a guard takes at most its share of the user's watches (a folder
// watched again takes none); past it, it trips.
func TestMoveGuardWatchLimit(t *testing.T) {
	g, root := guarded(t)
	g.limit = 3 // the destination and a hold 2
	a := filepath.Join(root, "a")
	var st unix.Stat_t
	unix.Stat(a, &st)
	g.watch(openDir(t, a), uint64(st.Dev))
	os.Mkdir(filepath.Join(root, "b"), 0o755)
	os.Mkdir(filepath.Join(root, "c"), 0o755)
	g.watch(openDir(t, filepath.Join(root, "b")), uint64(st.Dev))
	if !quiet(g) {
		t.Fatal("3 watches of 3 tripped the guard")
	}
	g.watch(openDir(t, filepath.Join(root, "c")), uint64(st.Dev))
	if quiet(g) {
		t.Error("a fourth watch of 3 left the guard quiet")
	}
}

// TestMoveGuardMount: a mount anywhere (here over a folder of the destination) is counted:
// it puts another folder at a name without an inotify event, and every chain checked before
// it is checked again.
func TestMoveGuardMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	g, root := guarded(t)
	before, _ := g.quiet()
	a := filepath.Join(root, "a")
	if err := unix.Mount("none", a, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	defer unix.Unmount(a, unix.MNT_DETACH)
	if after, ok := g.quiet(); ok && after == before {
		t.Error("a mount over a folder of the destination went uncounted")
	}
}
