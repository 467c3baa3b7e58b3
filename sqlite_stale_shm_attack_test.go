package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackSQLiteStaleShmAheadOfWal: a WAL database that no process has open, laid down by
// a file-level copy that read its -wal before its -shm: the -wal as a checkpoint
// (TRUNCATE) and the next commit's first write left it, its header alone, and the -shm
// after that commit, its index naming frames the -wal does not hold. The application,
// opening it, would find no other connection, rebuild the index from the -wal and read the
// 10 rows in the database file. backup's read-only connection may not rebuild the -shm, and
// SQLite read the stale one, found it ahead of the -wal, and tried again and again, in C,
// sleeping, for 10 s whatever --sqlite-timeout said (and Ctrl-C could not stop it), then
// failed with SQLITE_PROTOCOL: the sound database was lost.
//
// Expected: a -shm that no process holds (every connection that uses one keeps a lock on
// it) is stale, and the database is read as one without a -shm: its -wal copied with it
// and recovered in the staging folder. The run is complete in well under 10 s, holds the 10
// rows, and only reads the folder.
func TestAttackSQLiteStaleShmAheadOfWal(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	other := filepath.Join(t.TempDir(), "w.db")
	db := walDB(t, other, 10, 100)
	sqlExec(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
	addRows(t, db, 5, 100)
	copyDB(t, other, filepath.Join(app, "state.db"), "-wal", "-shm")
	if err := os.Truncate(filepath.Join(app, "state.db-wal"), 32); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	createOnlyReads(t, dir, filepath.Join("app", "state.db"), 10)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the run took %v", took.Round(time.Second))
	}
}
