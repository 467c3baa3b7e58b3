package main

import (
	"path/filepath"
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
				walDB(t, db, 8, 100)
			} else {
				other := filepath.Join(t.TempDir(), "w.db")
				walDB(t, other, 8, 100)
				copyDB(t, other, db, "-wal", "-shm")
			}
			createOnlyReads(t, dir, filepath.Join("app", "state.db"), 8)
		})
	}
}
