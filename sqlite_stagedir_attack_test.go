package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteStagingFolderOthersMayWrite: root backs up a database only root may read
// (mode 0600) with -o - (or --recipient: plaintext), so its snapshot is staged in $TMPDIR,
// here a folder that others may write and that has no sticky bit (0777), or that belongs to
// nobody. SQLite opens the staged copy by name, and the run opened it again by name to
// archive it: nobody renamed root's new .backup-spool-sqlite-N away and put a file of his
// own (mode 0666) at its name, held open, and root's run copied the whole database into it
// (tried by hand with strace holding SQLite's open: nobody's file held the secret rows, root's
// empty copy stayed behind, and the run said complete).
//
// Expected: a snapshot is not staged in a folder where another user may swap its files: the
// database is lost, said why (exit 3), and nothing is left in that folder.
func TestAttackSQLiteStagingFolderOthersMayWrite(t *testing.T) {
	mustRoot(t)
	for _, tt := range []struct {
		name string
		mode os.FileMode
		uid  int
	}{{"world-writable", 0o777, 0}, {"nobody's", 0o755, nobody}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
			db := openSQLite(t, filepath.Join(dir, "app", "secret.db"), "delete")
			addRows(t, db, 3, 100)
			if err := os.Chmod(filepath.Join(dir, "app", "secret.db"), 0o600); err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(dir, "tmp")
			makeTree(t, tmp, map[string]node{".": {kind: "dir", mode: tt.mode}})
			if err := os.Chown(tmp, tt.uid, tt.uid); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + tmp}}, "create", "-o", "-", "--receipt", filepath.Join(dir, "r.json"), "app")
			mustExit(t, r, exitIncomplete)
			if !strings.Contains(r.stderr, "lost app/secret.db: snapshot: ") || !strings.Contains(r.stderr, tmp) {
				t.Errorf("stderr %q, want app/secret.db lost, naming the staging folder %s", r.stderr, tmp)
			}
			if left := listDir(t, tmp); len(left) > 0 {
				t.Errorf("left in the staging folder: %v", left)
			}
		})
	}
}
