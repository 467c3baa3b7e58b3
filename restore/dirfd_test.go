package restore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// withoutProc makes the destTrees the test opens check each folder of their chain, as
// when /proc is not mounted.
func withoutProc(t *testing.T) {
	old := procDir
	procDir = filepath.Join(t.TempDir(), "no-proc")
	t.Cleanup(func() { procDir = old })
}

// A folder asked where it is through /proc is found at its name, with any bytes in it; one
// moved out of DEST, replaced by a symlink or by a new folder, or deleted, is not there, and
// check names it as moved, with /proc and without.
func TestDestTreeCheck(t *testing.T) {
	names := []string{"a/b", "a/b (deleted)", "new\nline/x"}
	for _, proc := range []bool{true, false} {
		for _, change := range []string{"", "moved", "symlink", "new folder", "deleted"} {
			for _, name := range names {
				t.Run(map[bool]string{true: "proc", false: "no proc"}[proc]+"/"+change+"/"+name, func(t *testing.T) {
					if !proc {
						withoutProc(t)
					}
					dir := t.TempDir()
					dest := filepath.Join(dir, "dest")
					if err := os.MkdirAll(filepath.Join(dest, name), 0o755); err != nil {
						t.Fatal(err)
					}
					tree, err := openDestTree(dest, nil)
					if err != nil {
						t.Fatal(err)
					}
					defer tree.close()
					if got := tree.procFD >= 0; got != proc {
						t.Fatalf("/proc used: %v, want %v", got, proc)
					}
					if _, err := tree.dir(name, false); err != nil {
						t.Fatal(err)
					}
					leaf := filepath.Join(dest, name)
					switch change {
					case "moved", "symlink", "new folder":
						if err := os.Rename(leaf, filepath.Join(dir, "away")); err != nil {
							t.Fatal(err)
						}
					case "deleted":
						if err := os.Remove(leaf); err != nil {
							t.Fatal(err)
						}
					}
					switch change {
					case "symlink":
						err = os.Symlink(filepath.Join(dir, "away"), leaf)
					case "new folder":
						err = os.Mkdir(leaf, 0o755)
					}
					if err != nil {
						t.Fatal(err)
					}
					if got, want := tree.at(tree.chain[len(tree.chain)-1]), proc && change == ""; got != want {
						t.Errorf("at says %v, want %v", got, want)
					}
					err = tree.check(name)
					switch {
					case change == "" && err != nil:
						t.Errorf("check: %v; want nil", err)
					case change != "" && !errors.Is(err, errMoved):
						t.Errorf("check: %v; want %v", err, errMoved)
					}
				})
			}
		}
	}
}

// A destination moved as a whole is not where /proc said it was, but each folder is still
// at its name in the one above: the restore goes on into it, as it did before /proc was
// asked.
func TestDestTreeDestMoved(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	if err := os.MkdirAll(filepath.Join(dest, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := openDestTree(dest, func(string) uint32 { return 0o755 })
	if err != nil {
		t.Fatal(err)
	}
	defer tree.close()
	if _, err := tree.dir("a/b", false); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dest, filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if tree.at(tree.chain[1]) {
		t.Error("at says a/b is where it was, in a destination moved")
	}
	if err := tree.check("a/b"); err != nil {
		t.Errorf("check: %v; want nil", err)
	}
	if _, err := tree.dir("a/b/c", true); err != nil {
		t.Errorf("dir: %v; want a/b/c made in the moved destination", err)
	}
}
