package walker

import (
	"context"
	"fmt"
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
