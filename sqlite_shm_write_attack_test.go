package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackSQLiteShmWritten: a WAL database with commits in its -wal and a -shm, (live) its
// writer's connection open and idle, or (stale) left by a writer that died, is read by
// root's run through a read-only connection. SQLite opened the -shm read-write (root may)
// and wrote it: read marks into a live one, a whole new WAL index into a stale one (which no
// other connection held). The -shm's mtime moved (the file in the tree written), and with
// it every later run's view of the tree; a run as the owner does the same.
//
// Expected: the run only reads: every file in the folder keeps its inode, size, mtime and
// ctime, and the snapshot holds every commit.
func TestAttackSQLiteShmWritten(t *testing.T) {
	mustRoot(t)
	for _, state := range []string{"live", "stale"} {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			app := filepath.Join(dir, "app")
			makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
			db := filepath.Join(app, "state.db")
			if state == "live" {
				w := openSQLite(t, db, "wal")
				sqlExec(t, w, "PRAGMA wal_autocheckpoint = 0")
				addRows(t, w, 8, 100)
			} else {
				other := filepath.Join(t.TempDir(), "w.db")
				w := openSQLite(t, other, "wal")
				sqlExec(t, w, "PRAGMA wal_autocheckpoint = 0")
				addRows(t, w, 8, 100)
				for _, suffix := range []string{"", "-wal", "-shm"} {
					data, err := os.ReadFile(other + suffix)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(db+suffix, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			before := folderState(t, app)
			archive := filepath.Join(dir, "b.zip")
			r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
			if after := folderState(t, app); !slices.Equal(after, before) {
				t.Errorf("the folder changed:\n%s\nwas:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
			}
			mustExit(t, r, exitComplete)
			if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "state.db")); got.count != 8 {
				t.Errorf("the restored database holds %d rows, want the 8 committed", got.count)
			}
		})
	}
}
