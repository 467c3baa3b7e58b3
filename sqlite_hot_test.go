package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
	makeTree(t, out, map[string]node{".": {kind: "dir", mode: 0o777 | os.ModeSticky}})
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

// TestAttackSQLiteImmutableCopyMissesWriteWithMtimePutBack: the change says a write with
// the mtime put back, during the read, is now seen (the change time moved). A database file
// (--sqlite auto, the default) is not read by that check: the archive reads a snapshot whose
// fstat is frozen, and the snapshot of a WAL database with no -wal is copied as immutable,
// checked afterwards by size and mtime alone (sqlitesnap/copy.go, copyImmutable). app/db
// holds ten rows of 3000 bytes, one a page, 'A' first and 'Z' last. While SQLite copies its
// pages (strace holds each pread64; the change is made once the 5th page is read), both rows
// are rewritten in place ('A'→'B', 'Z'→'Y', the same size) and the mtime put back. The
// stored "consistent snapshot" holds 'A' and 'Y': a database that never existed, in a run
// that says complete, with no warning.
//
// Expected: the immutable copy's check compares the change time too (as the file check now
// does), so the database is read again (the usual way) and the snapshot holds 'B' and 'Y'.
func TestAttackSQLiteImmutableCopyMissesWriteWithMtimePutBack(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(app, "db")
	db := openSQLite(t, path, "wal")
	for _, c := range "ACDEFGHIJZ" {
		sqlExec(t, db, "INSERT INTO t (v) VALUES (?)", strings.Repeat(string(c), 3000))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path + "-wal"); err == nil {
		t.Skip("the -wal outlived the last connection")
	}
	row := func(c byte) []byte { return bytes.Repeat([]byte{c}, 3000) }
	r := runHeld(t, dir, "pread64:delay_exit=300000", []string{path}, func(l string) bool {
		return strings.Contains(l, "pread64(") && strings.Contains(l, "db>") && strings.Contains(l, ", 4096, 16384)")
	}, func() {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, sw := range [][2]byte{{'A', 'B'}, {'Z', 'Y'}} {
			at := bytes.Index(data, row(sw[0]))
			if at < 0 {
				t.Fatalf("no row of %c in the database", sw[0])
			}
			if _, err := f.WriteAt(row(sw[1]), int64(at)); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		ts := []unix.Timespec{unix.NsecToTimespec(st.Atim.Nano()), unix.NsecToTimespec(st.Mtim.Nano())}
		if err := unix.UtimesNano(path, ts); err != nil {
			t.Fatal(err)
		}
	}, "create", "-o", "b.zip", "app")
	if r.code != exitComplete && r.code != exitIncomplete {
		t.Fatalf("create: exit %d\n%s", r.code, r.stderr)
	}
	snap := []byte(readZipGo(t, filepath.Join(dir, "b.zip"))["app/db"])
	oldFirst, newLast := bytes.Contains(snap, row('A')), bytes.Contains(snap, row('Y'))
	if oldFirst && newLast {
		t.Errorf("the snapshot holds the first row as it was ('A') and the last as rewritten ('Y'): a database that never existed (exit %d: %s)",
			r.code, strings.TrimSpace(r.stderr))
	}
}
