package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSymlinkDotDotDirNamed gives create's --output-dir as c1, a symlink to
// sub/../gone where sub is a symlink to far/deep: the kernel reaches far/gone, which does
// not exist. symlinkNowhere joined the link's target to its folder by name (filepath.Join
// cleans sub/.. away), looked at ./gone, a folder that is there, and took the link for one
// that leads somewhere: create said "output folder c1: file exists", the message b4351c7
// set out to end, naming a file the user could not see. Correct: exit 1, "a symlink to
// sub/../gone, which does not exist", and nothing made at far/gone.
func TestAttackSymlinkDotDotDirNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	for _, d := range []string{"gone", "far/deep"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"sub": "far/deep", "c1": "sub/../gone"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "c1", "app")
	first, _, _ := strings.Cut(r.stderr, "\n")
	if want := "a symlink to sub/../gone, which does not exist"; r.code != exitFailed || !strings.Contains(first, want) {
		t.Errorf("create --output-dir c1: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitFailed, want)
	}
	if _, err := os.Lstat(filepath.Join(dir, "far/gone")); err == nil {
		t.Errorf("the link's missing target was made")
	}
}
