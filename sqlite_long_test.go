package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// maxSnapshotRSS is create's memory target for one large file (see BENCHMARKS.md), which a
// large database's snapshot must keep to.
const maxSnapshotRSS = 100 << 20

// TestSQLiteLargeRSS snapshots a 1 GiB database and checks the run's peak RSS. It takes
// about a minute and 3 GiB of disk, so it runs in make test-long (BACKUP_TEST_LONG=1).
func TestSQLiteLargeRSS(t *testing.T) {
	if os.Getenv("BACKUP_TEST_LONG") == "" {
		t.Skip("a long test: make test-long runs it")
	}
	if raceEnabled {
		t.Skip("peak RSS under the race detector says nothing of the binary's")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "app", "big.db")
	os.MkdirAll(filepath.Dir(path), 0o755)
	fillDatabase(t, path, 1024)
	archive := filepath.Join(dir, "app.zip")
	code, output, rss := runMeasured(t, dir, "create", "--level", "1", "-o", archive, "app")
	if code != exitComplete {
		t.Fatalf("create: exit %d\n%s", code, output)
	}
	t.Logf("peak RSS %d MiB", rss>>20)
	if rss > maxSnapshotRSS {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", rss>>20, maxSnapshotRSS>>20)
	}
	if rc := readReceipt(t, archive+".receipt.json"); rc.Counts.Snapshots != 1 || rc.Status != "complete" {
		t.Errorf("receipt: %s, %d snapshots; want complete, 1", rc.Status, rc.Counts.Snapshots)
	}
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "big.db")); got.count != 1024 {
		t.Errorf("restored database holds %d rows, want 1024", got.count)
	}
}

// fillDatabase writes a database of n rows of 1 MiB of random bytes at path, fast: no
// journal, no syncs.
func fillDatabase(t *testing.T, path string, n int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sqlExec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
	sqlExec(t, db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?) INSERT INTO t (v) SELECT randomblob(1<<20) FROM n", n)
}
