package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSymlinkChainDirNamed gives adopt's DIR, create's --output-dir and restore's
// --undo-dir as a symlink to a symlink to nothing, and as a symlink loop. mkdirFolder and
// existingFolder read the first link only and said "a symlink to chain2, which does not
// exist" of chain1, where chain2 is there for the user to see (it is the link after that
// which leads nowhere); a loop was "a symlink to loop2, which does not exist", and a DIR
// below the loop "mkdir loop1: file exists": the file named was not what was wrong, the
// error b4351c7 set out to end. Correct: the missing end of the chain named, a loop said.
func TestAttackSymlinkChainDirNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", "dest"), exitComplete)
	missing := filepath.Join(dir, "nowhere", "x")
	for link, target := range map[string]string{"chain1": "chain2", "chain2": missing, "loop1": "loop2", "loop2": "loop1"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"adopt", "chain1", "a.zip"}, exitFailed, "which leads to " + missing + ", which does not exist"},
		{[]string{"create", "-q", "--output-dir", "chain1", "app"}, exitFailed, "which leads to " + missing + ", which does not exist"},
		{[]string{"restore", "-q", "--force", "--undo-dir", "chain1", "a.zip", "dest"}, exitUsage, "which leads to " + missing + ", which does not exist"},
		{[]string{"adopt", "loop1", "a.zip"}, exitFailed, "a symlink to loop2, in a loop of symlinks"},
		{[]string{"adopt", "loop1/sub", "a.zip"}, exitFailed, "a symlink to loop2, in a loop of symlinks"},
		{[]string{"create", "-q", "--output-dir", "loop1", "app"}, exitFailed, "a symlink to loop2, in a loop of symlinks"},
	} {
		r := backup(t, runOpts{dir: dir}, tc.args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != tc.code || !strings.Contains(first, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("the chain's missing end was made")
	}
}
