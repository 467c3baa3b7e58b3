package walker

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSwapDir moves a directory of the tree away right after the stat of one entry and puts
// a symlink to a folder outside the tree, or another directory, in its place. The files are
// opened after the walk on other goroutines, as the archiver's workers do. Nothing may be
// read from outside the tree: a file is the original, and a directory that is no longer the
// one its stat saw is not listed, and says so.
func TestSwapDir(t *testing.T) {
	cases := []struct {
		name  string
		swap  string // "dir" is swapped right after the stat of the entry with this name
		link  bool   // for a symlink to outside; else for outside itself, moved in
		want  []string
		fails string // what ReadDirFailed is told
	}{
		{"for a symlink after the stat of a file in it", "x", true,
			[]string{"r/dir/sub/y=in y", "r/dir/x=in x", "r/keep=kept"}, ""},
		{"for a symlink after the stat of a directory in it", "sub", true,
			[]string{"r/dir/sub/y=in y", "r/dir/x=in x", "r/keep=kept"}, ""},
		{"for a symlink after its own stat", "dir", true,
			[]string{"r/keep=kept"}, "open r/dir: " + errReplaced.Error()},
		{"for another directory after its own stat", "dir", false,
			[]string{"r/keep=kept"}, "open r/dir: " + errReplaced.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			root := filepath.Join(top, "src")
			writeFiles(t, root, map[string]string{"dir/x": "in x", "dir/sub/y": "in y", "keep": "kept"})
			writeFiles(t, top, map[string]string{"outside/x": "SECRET", "outside/sub/y": "SECRET"})
			swapped := false
			lstat := func(dirfd int, name string) (fs.FileInfo, error) {
				info, err := lstatAt(dirfd, name)
				if name == c.swap && !swapped {
					swapped = true
					swapDir(t, filepath.Join(root, "dir"), filepath.Join(top, "outside"), c.link)
				}
				return info, err
			}
			var fails []string
			files := map[string]Handle{}
			w := Walker{lstat: lstat,
				Visit: func(e Entry) error {
					if e.Info.Mode().IsRegular() {
						files[e.Name] = e.Hold()
					}
					return nil
				},
				ReadDirFailed: func(_ Entry, err error) error {
					var pe *fs.PathError
					if !errors.As(err, &pe) {
						t.Errorf("ReadDirFailed told %v, not an *fs.PathError", err)
					}
					fails = append(fails, err.Error())
					return nil
				},
			}
			if err := w.Walk(context.Background(), root, "r"); err != nil {
				t.Fatal(err)
			}
			if got := readHandles(t, files); !slices.Equal(got, c.want) {
				t.Errorf("read %q, want %q", got, c.want)
			}
			if got := strings.Join(fails, "; "); got != c.fails {
				t.Errorf("ReadDirFailed told %q, want %q", got, c.fails)
			}
		})
	}
}

// readHandles opens and reads each file on a goroutine of its own, after the walk, and
// returns "name=content" sorted.
func readHandles(t *testing.T, files map[string]Handle) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for name, h := range files {
		wg.Go(func() {
			defer h.Release()
			f, err := h.Open()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			mu.Lock()
			got = append(got, name+"="+string(data))
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	return got
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// swapDir moves dir away and puts a symlink to other, or other itself, in its place.
func swapDir(t *testing.T, dir, other string, link bool) {
	t.Helper()
	if err := os.Rename(dir, dir+".orig"); err != nil {
		t.Fatal(err)
	}
	swap := os.Rename
	if link {
		swap = os.Symlink
	}
	if err := swap(other, dir); err != nil {
		t.Fatal(err)
	}
}
