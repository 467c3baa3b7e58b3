package sqlitesnap

import (
	"bufio"
	"fmt"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"
)

// pyWAL makes a WAL database at path with table t and rows rows, as Python's sqlite3 does,
// and closes it: no -wal or -shm is left beside it.
func pyWAL(t *testing.T, path string, rows int) {
	t.Helper()
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	script := `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=wal")
c.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)")
for i in range(int(sys.argv[2])):
    c.execute("INSERT INTO t (v) VALUES ('a')")
c.close()
`
	if out, err := osexec.Command("python3", "-c", script, path, fmt.Sprint(rows)).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v: %s", err, out)
	}
}

// TestAttackSQLiteWriterClosedDuringExclusiveWait: a WAL database's application that took
// exclusive locking mode once it had opened it (so its -shm stays) holds it locked, and the
// copy waits for it. The application then closes it, checkpointing its -wal into the
// database and removing the -wal and the -shm: the database is free and whole. But SQLite's
// connection, opened while the -wal was there, went on to make a new one beside it, which
// backup keeps it from (guardedOpen): the copy failed with SQLITE_READONLY_DIRECTORY and the
// database was lost ("Attempt to write a readonly database"), run incomplete, every time.
//
// Expected: the wait ends in a snapshot holding every commit.
func TestAttackSQLiteWriterClosedDuringExclusiveWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	pyWAL(t, path, 0)
	app := osexec.Command("python3", "-c", `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=wal")
c.execute("PRAGMA locking_mode=exclusive")
for i in range(10):
    c.execute("INSERT INTO t (v) VALUES ('a')")
print("ready", flush=True)
time.sleep(0.5)
c.execute("INSERT INTO t (v) VALUES ('b')")
c.close()
`, path)
	out, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	defer app.Wait()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stage := t.TempDir()
	s, err := Take(t.Context(), source(t, path), Options{Dir: stage, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Take of a database whose writer closed it during the wait: %v", err)
	}
	defer s.Close()
	if n := countRows(t, s.File); n != 11 {
		t.Errorf("snapshot holds %d rows, want 11", n)
	}
	emptyDir(t, stage)
}

// TestAttackSQLiteWriterClosedDuringImmutableRead: a WAL database no connection has open is
// read as immutable; an application opens it meanwhile, commits and closes it (its -wal
// checkpointed and removed). The change is seen and the database read the usual way, but
// that read, a WAL database with no -wal, needs SQLite to make one, which backup keeps it
// from: the database was lost (SQLITE_READONLY_DIRECTORY) though nothing holds it.
//
// Expected: a snapshot holding the application's commit.
func TestAttackSQLiteWriterClosedDuringImmutableRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	pyWAL(t, path, 10)
	written := false
	opts := Options{Dir: t.TempDir(), immutableRead: func() {
		if !written {
			pyWAL(t, path, 1)
			written = true
		}
	}}
	s, err := Take(t.Context(), source(t, path), opts)
	if err != nil {
		t.Fatalf("Take of a database a writer opened and closed during the read: %v", err)
	}
	defer s.Close()
	if n := countRows(t, s.File); n != 11 {
		t.Errorf("snapshot holds %d rows, want 11", n)
	}
	emptyDir(t, opts.Dir)
}
