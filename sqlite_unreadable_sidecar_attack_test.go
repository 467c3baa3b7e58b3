package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteUnreadableCopiedSidecarSaysWhy: a database of root's that anyone may read,
// beside it a sidecar only root may read, backed up as nobody: a -wal holding commits with
// no -shm (a crash lost it), or a crashed writer's hot -journal. Both are copied by backup
// itself into the staging folder (see docs/sqlite.md), and the open of that sidecar failed.
// The warning said only "lost app/s.db: snapshot: permission denied", of a database the user
// can see nobody is denied: the wrapping that named the sidecar was dropped, the archive
// wording a warning by the innermost *fs.PathError's cause. The -shm SQLite opens is named
// (TestAttackSQLiteUnreadableShmSaysWhy); these were not.
//
// Expected: lost, and the line names the sidecar (-wal, -journal) and permission denied.
func TestAttackSQLiteUnreadableCopiedSidecarSaysWhy(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	for _, tc := range []struct {
		name, sidecar string
		make          func(t *testing.T, path string)
	}{
		{"wal without shm", "-wal", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "w.db")
			walDB(t, other, 6, 100)
			copyDB(t, other, path, "-wal")
		}},
		{"hot journal", "-journal", hotJournal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := sharedTempDir(t)
			app := filepath.Join(dir, "app")
			makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
			db := filepath.Join(app, "s.db")
			tc.make(t, db)
			if err := os.Chmod(db, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(db+tc.sidecar, 0o600); err != nil {
				t.Fatal(err)
			}
			r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-o", filepath.Join(dir, "b.zip"), "app")
			mustExit(t, r, exitIncomplete)
			line := lineAbout(r.stderr, "app/s.db")
			if !strings.Contains(line, "lost app/s.db: snapshot: ") || !strings.Contains(line, tc.sidecar) || !strings.Contains(line, "permission denied") {
				t.Errorf("the line about app/s.db: %q; want it lost, its %s named, permission denied", line, tc.sidecar)
			}
		})
	}
}
