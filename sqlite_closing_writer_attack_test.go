package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// exclusiveCloser is an application that opens a WAL database, takes exclusive locking mode
// once it has opened it (so its -shm stays), commits 10 rows, says "ready", and after half
// a second commits one more and closes it: its -wal checkpointed and removed.
const exclusiveCloser = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=wal")
c.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
c.close()
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=wal")
c.execute("PRAGMA locking_mode=exclusive")
for i in range(10):
    c.execute("INSERT INTO t (v) VALUES ('a')")
print("ready", flush=True)
time.sleep(0.5)
c.execute("INSERT INTO t (v) VALUES ('b')")
c.close()
`

// TestAttackSQLiteWriterClosedDuringWait: a run waits for a WAL database its application
// holds in exclusive locking mode, and the application closes it during the wait. The
// database was then free and whole, but SQLite's connection, opened while the -wal was
// there, went on to make a new one, which backup keeps it from: the database was lost
// ("copying it: Attempt to write a readonly database"), exit 3, on every try; and an
// application that opens, commits and closes its database during the run's read of it did
// the same, now and then.
//
// Expected: the wait ends in a snapshot of all 11 rows, the run complete.
func TestAttackSQLiteWriterClosedDuringWait(t *testing.T) {
	mustTool(t, "python3")
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "app"), 0o755)
	app := exec.Command("python3", "-c", exclusiveCloser, filepath.Join(dir, "app", "state.db"))
	stdout, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	defer app.Wait()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the application did not get to hold the database: %q, %v", line, err)
	}
	archive := filepath.Join(dir, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--sqlite-timeout", "5s", "-o", archive, "app")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	if rc := readReceipt(t, archive+".receipt.json"); rc.Counts.Snapshots != 1 {
		t.Errorf("receipt counts %d snapshots, want 1", rc.Counts.Snapshots)
	}
	got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "state.db"))
	if got.count != 11 {
		t.Errorf("snapshot holds %d rows, want 11", got.count)
	}
}
