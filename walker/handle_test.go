package walker

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(fds)
}

// TestDirsOpen: while the walk runs, the directories on its path are open, and those whose
// files are held; once the walk is over and every Handle released, none is.
func TestDirsOpen(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("d%02d/sub/f", i)] = "x"
	}
	writeFiles(t, root, files)
	before := openFDs(t)
	var held []Handle
	maxOpen := 0
	w := Walker{Visit: func(e Entry) error {
		maxOpen = max(maxOpen, openFDs(t)-before)
		if e.Info.Mode().IsRegular() && len(held) < 5 {
			held = append(held, e.Hold())
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, "r"); err != nil {
		t.Fatal(err)
	}
	// The root's parent, the root, d19 and d19/sub at most, besides the five held (in
	// d00/sub to d04/sub).
	if maxOpen > 4+5 {
		t.Errorf("up to %d descriptors open during the walk, want at most 9", maxOpen)
	}
	if got := openFDs(t) - before; got != len(held) {
		t.Errorf("%d descriptors open after the walk, want %d (the held files' folders)", got, len(held))
	}
	for _, h := range held {
		f, err := h.Open()
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		h.Release()
	}
	if got := openFDs(t) - before; got != 0 {
		t.Errorf("%d descriptors open after every Handle was released, want 0", got)
	}
}

// TestWalkFilesystemRoot: "/" is its own parent; the walk names it and opens it relative to
// itself.
func TestWalkFilesystemRoot(t *testing.T) {
	var got []string
	w := Walker{Visit: func(e Entry) error {
		got = append(got, e.Name)
		if _, err := e.OpenFile("no such file here"); !os.IsNotExist(err) {
			t.Errorf("OpenFile in /: %v, want not found", err)
		}
		return fs.SkipDir
	}}
	if err := w.Walk(context.Background(), "/", "root"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "root" {
		t.Errorf("visited %q, want the root only", got)
	}
}

// TestWalkFileRoot: a root that is a file is opened relative to the folder holding it, through
// a symlink when the root is one.
func TestWalkFileRoot(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real/f.txt": "content"})
	if err := os.Symlink(filepath.Join(dir, "real", "f.txt"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	files := map[string]Handle{}
	w := Walker{Visit: func(e Entry) error {
		files[e.Name] = e.Hold()
		return nil
	}}
	if err := w.Walk(context.Background(), filepath.Join(dir, "link"), "link"); err != nil {
		t.Fatal(err)
	}
	if got := readHandles(t, files); len(got) != 1 || got[0] != "link=content" {
		t.Errorf("read %q, want link=content", got)
	}
}

// TestHandleDirFollowsTheHeldDirectory: a path made of Dir and Name still reaches the file
// after its folder was renamed and another put in its place.
func TestHandleDirFollowsTheHeldDirectory(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"sub/f": "walked"})
	var h Handle
	w := Walker{Visit: func(e Entry) error {
		if e.Rel == "sub/f" {
			h = e.Hold()
		}
		return nil
	}}
	if err := w.Walk(t.Context(), root, "root"); err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "moved"))
	writeFiles(t, root, map[string]string{"sub/f": "swapped in"})
	got, err := os.ReadFile(h.Dir() + "/" + h.Name())
	if err != nil || string(got) != "walked" {
		t.Errorf("read through Dir()/Name(): %q, %v; want %q", got, err, "walked")
	}
}

// TestOpenSibling opens a regular file beside the entry, and refuses anything else.
func TestOpenSibling(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"x.db": "db", "x.db-wal": "wal", "dir/f": ""})
	os.Symlink("x.db", filepath.Join(root, "link"))
	got := map[string]string{}
	w := Walker{Visit: func(e Entry) error {
		if e.Rel != "x.db-wal" {
			return nil
		}
		for _, name := range []string{"x.db", "dir", "link", "missing"} {
			f, err := e.OpenSibling(name)
			if err != nil {
				got[name] = "error"
				continue
			}
			data, _ := io.ReadAll(f)
			f.Close()
			got[name] = string(data)
		}
		return nil
	}}
	if err := w.Walk(t.Context(), root, "root"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"x.db": "db", "dir": "error", "link": "error", "missing": "error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OpenSibling: %v, want %v", got, want)
	}
}
