package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackOutputReplacesSymlinkInSource gives create an output that is a user's symlink
// inside the SOURCE, leading to a file outside it. The rename replaces the link itself, a
// file inside the SOURCE, but the check looked where the link leads (outside every SOURCE) and
// let it be replaced: the user's link was gone, a metrics file in its place, exit 0. Correct:
// a usage error (exit 2) as for a regular file of the user's there, the link untouched.
func TestAttackOutputReplacesSymlinkInSource(t *testing.T) {
	for _, flag := range []string{"--metrics-file", "--receipt"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, dir, map[string]node{
				"src/f.txt":       {content: "hi\n"},
				"other/notes.txt": {content: "user data\n"},
			})
			link := filepath.Join(dir, "src/link")
			if err := os.Symlink(filepath.Join(dir, "other/notes.txt"), link); err != nil {
				t.Fatal(err)
			}

			r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", flag, "src/link", "src")
			if r.code != exitUsage || !strings.Contains(r.stderr, "inside SOURCE") {
				t.Errorf("exit %d, want %d with %s said inside SOURCE; stderr:\n%s", r.code, exitUsage, flag, r.stderr)
			}
			if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
				t.Errorf("src/link: %v, %v; want the user's symlink left", info, err)
			}
			assertContent(t, filepath.Join(dir, "other/notes.txt"), "user data\n")
		})
	}
}
