package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// crashWriter is a writer of a rollback-journal database that commits 100 rows, then, in a
// transaction larger than its page cache (so that changed pages reach the database file
// before the commit), adds rows and rewrites the first 100, and waits to be killed.
const crashWriter = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
c.execute("BEGIN")
for i in range(100):
    c.execute("INSERT INTO t (v) VALUES (randomblob(1000))")
c.execute("COMMIT")
c.execute("PRAGMA cache_size=10")
c.execute("BEGIN")
for i in range(3000):
    c.execute("INSERT INTO t (v) VALUES (randomblob(1000))")
c.execute("UPDATE t SET v = randomblob(10) WHERE id <= 100")
print("ready", flush=True)
time.sleep(3600)
`

// hotJournal makes the database path with a hot journal for real: its writer, killed with
// SIGKILL in the middle of a transaction, leaves the database file holding some of that
// transaction's pages and a -journal holding the pages they replaced.
func hotJournal(t *testing.T, path string) {
	t.Helper()
	mustTool(t, "python3")
	cmd := exec.Command("python3", "-c", crashWriter, path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || line != "ready\n" {
		t.Fatalf("the writer did not get to its transaction: %q, %v", line, err)
	}
	info, err := os.Stat(path + "-journal")
	if err != nil || info.Size() == 0 {
		t.Fatalf("no hot journal: %v", err)
	}
}

// fileState is what a test compares to see that a file was not written: its bytes and
// its mtime.
type fileState struct {
	data  string
	mtime time.Time
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{string(data), lstat(t, path).ModTime()}
}

// TestSQLiteHotJournal: a rollback-journal database whose writer crashed mid-transaction
// (a hot journal, which a read-only connection cannot roll back) is snapshotted as of its
// last commit: the database and its journal are copied to the staging folder and SQLite
// rolls the copy back there. The source is never written: it is backed up as nobody, from a
// folder nobody cannot write, and its bytes and mtimes are the same afterwards.
func TestSQLiteHotJournal(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	db := filepath.Join(app, "state.db")
	hotJournal(t, db)
	before := map[string]fileState{}
	for _, p := range []string{db, db + "-journal"} {
		before[p] = stateOf(t, p)
	}
	names := listDir(t, app)
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir", mode: 0o777}})
	for _, uid := range []int{nobody, 0} {
		archive := filepath.Join(out, fmt.Sprintf("app-%d.zip", uid))
		r := backup(t, runOpts{dir: dir, uid: uid}, "create", "-o", archive, "app")
		mustExit(t, r, exitComplete)
		rc := readReceipt(t, archive+".receipt.json")
		if rc.Counts.Snapshots != 1 || len(rc.Warnings) != 0 {
			t.Errorf("uid %d: counts %+v, warnings %q; want 1 snapshot and no warning", uid, rc.Counts, warningsOf(rc))
		}
		if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "state.db")); got != (rowStats{100, 1, 100}) {
			t.Errorf("uid %d: the restored database holds %+v, want the 100 committed rows", uid, got)
		}
		for p, want := range before {
			if got := stateOf(t, p); got != want {
				t.Errorf("uid %d: %s was written (mtime %v, was %v)", uid, p, got.mtime, want.mtime)
			}
		}
		if got := listDir(t, app); !slices.Equal(got, names) {
			t.Errorf("uid %d: the source folder holds %q, held %q", uid, got, names)
		}
		if left := spoolsIn(t, out); len(left) > 0 {
			t.Errorf("uid %d: staged copies left behind: %v", uid, left)
		}
	}
}
