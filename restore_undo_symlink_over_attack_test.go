package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoRevertsEditOverRestoredSymlink: restore --force puts a stored symlink app/l
// where DEST held a file (or a symlink to elsewhere); the user then saves a file of his own
// at app/l, or points the link elsewhere. The undo put the saved app/l back over the user's
// file, exit 0, no warning: the before-state's "replaced" records only the files a restore
// writes, so of a symlink it recorded nothing, and the undo took "nothing recorded" for "the
// restore's". Correct: the undo leaves what the user put there, with the warning it gives a
// file edited since, and still puts back what holds the restore's symlink.
func TestAttackUndoRevertsEditOverRestoredSymlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, user string }{{"file", "file"}, {"link", "link"}, {"untouched", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"l": {kind: "symlink", content: "target"}})
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", "a.zip", "app"), exitComplete)
			dest := filepath.Join(dir, "dest")
			makeTree(t, dest, map[string]node{"app/l": {content: "old file\n"}})
			r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, "a.zip", dest)
			mustExit(t, r, exitComplete)
			l := filepath.Join(dest, "app/l")
			switch tc.user {
			case "file":
				if err := os.Remove(l); err != nil {
					t.Fatal(err)
				}
				writeFile(t, l, "the user's new work\n")
			case "link":
				if err := os.Remove(l); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("elsewhere", l); err != nil {
					t.Fatal(err)
				}
			}
			u := backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
			mustExit(t, u, exitComplete)
			switch tc.user {
			case "file":
				assertContent(t, l, "the user's new work\n")
			case "link":
				if got, err := os.Readlink(l); got != "elsewhere" {
					t.Errorf("app/l after the undo: %q, %v; want the user's link to elsewhere", got, err)
				}
			default:
				assertContent(t, l, "old file\n")
			}
			if warned := strings.Contains(u.stderr, "app/l: not put back: "); warned != (tc.user != "") {
				t.Errorf("undo warned that app/l stays: %v, want %v\n%s", warned, tc.user != "", u.stderr)
			}
		})
	}
}
