package walker

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func mkfiles(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if n[len(n)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// collect walks root and returns "name rel" for each entry, and the directories skipped.
func collect(t *testing.T, root, name string, skip ...string) []string {
	t.Helper()
	var got []string
	w := Walker{Visit: func(e Entry) error {
		if e.Err != nil {
			t.Errorf("%s: %v", e.Name, e.Err)
		}
		got = append(got, e.Name+" "+e.Rel)
		if slices.Contains(skip, e.Rel) {
			return fs.SkipDir
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, name); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWalkOrder(t *testing.T) {
	root := t.TempDir()
	mkfiles(t, root, "b", "a/z", "a/B", "a/a", "C/x", "empty/", "skipme/inside")
	if err := os.Symlink("a", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got := collect(t, root, "src", "skipme")
	want := []string{"src ", "src/C C", "src/C/x C/x", "src/a a", "src/a/B a/B", "src/a/a a/a", "src/a/z a/z",
		"src/b b", "src/empty empty", "src/link link", "src/skipme skipme"}
	if !slices.Equal(got, want) {
		t.Errorf("walk order\n%q\nwant\n%q", got, want)
	}
}

func TestWalkFollowsRootSymlinkOnly(t *testing.T) {
	dir := t.TempDir()
	mkfiles(t, dir, "real/f")
	if err := os.Symlink("real", filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(dir, "real/loop")); err != nil {
		t.Fatal(err)
	}
	got := collect(t, filepath.Join(dir, "root"), "root")
	want := []string{"root ", "root/f f", "root/loop loop"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWalkNoFollowRoot: with NoFollowRoot a root that is a symlink is visited as the link,
// and nothing it points to is; the folders above the root are still followed.
func TestWalkNoFollowRoot(t *testing.T) {
	dir := t.TempDir()
	mkfiles(t, dir, "outside/secret", "real/")
	if err := os.Symlink(filepath.Join(dir, "outside/secret"), filepath.Join(dir, "real/hosts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "dest")); err != nil {
		t.Fatal(err)
	}
	var got []string
	w := Walker{NoFollowRoot: true, Visit: func(e Entry) error {
		got = append(got, e.Name+" "+e.Info.Mode().Type().String())
		return nil
	}}
	if err := w.Walk(t.Context(), filepath.Join(dir, "dest/hosts"), "hosts"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"hosts L---------"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWalkMissingRoot(t *testing.T) {
	w := Walker{Visit: func(Entry) error { t.Error("visited"); return nil }}
	err := w.Walk(context.Background(), filepath.Join(t.TempDir(), "nope"), "nope")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v, want ErrNotExist", err)
	}
}

func TestWalkCancelled(t *testing.T) {
	root := t.TempDir()
	mkfiles(t, root, "a", "b")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	w := Walker{Visit: func(Entry) error { n++; cancel(); return nil }}
	if err := w.Walk(ctx, root, "r"); !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("err %v after %d entries, want Canceled after 1", err, n)
	}
}

// testDir opens path as the walk opens a directory.
func testDir(t *testing.T, path string) *dir {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := newDir(fd, os.NewFile(uintptr(fd), path))
	t.Cleanup(d.release)
	return d
}

func TestStatVanished(t *testing.T) {
	info, err := Walker{}.stat(testDir(t, t.TempDir()), "gone", "app/gone")
	var pe *fs.PathError
	if info != nil || !errors.As(err, &pe) || pe.Op != OpStat || pe.Path != "app/gone" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of a vanished path: %v, %v; want a stat PathError naming app/gone with ErrNotExist", info, err)
	}
}

// TestOpenFIFODoesNotBlock: the fallback open of a path lstat could not read, and a Handle's
// open, must not block on a FIFO. lstat cannot be made to fail here, so the open is tried
// directly.
func TestOpenFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := testDir(t, dir).openFile("fifo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("fstat: %v, %v; want a FIFO", info, err)
	}
}

// TestStatFailsOpenWorks: when lstat fails for a reason other than ENOENT, the walker asks
// fstat, and the entry carries both: a directory is still walked, a file still handed on.
func TestStatFailsOpenWorks(t *testing.T) {
	root := t.TempDir()
	mkfiles(t, root, "dir/f", "file")
	failing := func(dirfd int, name string) (fs.FileInfo, error) {
		if name == "dir" || name == "file" {
			return nil, syscall.EOVERFLOW
		}
		return lstatAt(dirfd, name)
	}
	var got []string
	w := Walker{lstat: failing, Visit: func(e Entry) error {
		var pe *fs.PathError
		switch {
		case e.Err == nil:
			got = append(got, e.Name)
		case errors.As(e.Err, &pe) && pe.Op == OpStat && e.Info != nil:
			got = append(got, e.Name+" (stat: "+pe.Err.Error()+", fstat: "+e.Info.Mode().Type().String()+")")
		default:
			t.Errorf("%s: info %v, err %v", e.Name, e.Info, e.Err)
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, "r"); err != nil {
		t.Fatal(err)
	}
	want := []string{"r", "r/dir (stat: value too large for defined data type, fstat: d---------)", "r/dir/f",
		"r/file (stat: value too large for defined data type, fstat: ----------)"}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestStatAndOpenFail: when the open fails too, the entry has no Info and an open error:
// the path is lost, never skipped.
func TestStatAndOpenFail(t *testing.T) {
	w := Walker{lstat: func(int, string) (fs.FileInfo, error) { return nil, syscall.EACCES }}
	info, err := w.stat(testDir(t, t.TempDir()), "missing-for-open", "r/x")
	var pe *fs.PathError
	if info != nil || !errors.As(err, &pe) || pe.Op != OpOpen || pe.Path != "r/x" {
		t.Errorf("got %v, %v; want no info and an open error naming r/x", info, err)
	}
}
