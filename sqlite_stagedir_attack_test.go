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

// TestAttackSQLiteStagingFolderParentOthers: the staging folder itself is root's, 0700, but
// (parent) the folder above it is nobody's, or (symlink) $TMPDIR is a symlink in nobody's
// folder: nobody may rename root's folder away, or point the symlink elsewhere, and put a
// folder of his in its place, between the check of the staging folder and SQLite's opens by
// name, with the same outcome as a folder of his. Only the last folder was checked: the run
// staged there and said complete.
//
// Expected: as for a staging folder of another user's: the database is lost, said why
// (exit 3), and nothing is staged there.
func TestAttackSQLiteStagingFolderParentOthers(t *testing.T) {
	mustRoot(t)
	for _, how := range []string{"parent", "symlink"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
			db := openSQLite(t, filepath.Join(dir, "app", "secret.db"), "delete")
			addRows(t, db, 3, 100)
			his := filepath.Join(dir, "his")
			makeTree(t, his, map[string]node{".": {kind: "dir", mode: 0o755}})
			tmp := filepath.Join(his, "tmp")
			if how == "symlink" {
				tmp = filepath.Join(dir, "roots-tmp")
			}
			makeTree(t, tmp, map[string]node{".": {kind: "dir", mode: 0o700}})
			env := tmp
			if how == "symlink" {
				env = filepath.Join(his, "tmp")
				if err := os.Symlink(tmp, env); err != nil {
					t.Fatal(err)
				}
				if err := os.Lchown(env, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chown(his, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + env}}, "create", "-o", "-", "--receipt", filepath.Join(dir, "r.json"), "app")
			mustExit(t, r, exitIncomplete)
			if !strings.Contains(r.stderr, "lost app/secret.db: snapshot: ") || !strings.Contains(r.stderr, his) {
				t.Errorf("stderr %q, want app/secret.db lost, naming %s", r.stderr, his)
			}
			if left := listDir(t, tmp); len(left) > 0 {
				t.Errorf("left in the staging folder: %v", left)
			}
		})
	}
}
