package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackAdoptDanglingSymlinkDir adopts into a DIR that is a symlink to nothing (a set's
// disk not mounted, a link left by a move). adopt made DIR with os.MkdirAll, which said
// "mkdir DIR: file exists", a file the user could not find there; create --output-dir says
// what it is. Correct: exit 1 and one line saying DIR is a symlink to a target that does
// not exist, nothing made at the target.
func TestAttackAdoptDanglingSymlinkDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	if err := os.Symlink("nowhere", filepath.Join(dir, "set")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "adopt", "set", "a.zip")
	if r.code != exitFailed || !strings.Contains(r.stderr, "a symlink to nowhere, which does not exist") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("adopt into a dangling symlink: exit %d, stderr %q; want 1 and one line saying it is a symlink to nowhere", r.code, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("adopt made the symlink's target")
	}
}
