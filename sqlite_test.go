package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backup/format"
)

// The end-to-end tests of --sqlite: the databases are written by this test process through
// modernc's SQLite (the same library the binary uses), and the binary, another process,
// snapshots them, as it would an application's.

// openSQLite opens (creating) the database at path in journal mode mode, with table t.
func openSQLite(t *testing.T, path, mode string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode("+mode+")&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	sqlExec(t, db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB)")
	return db
}

func sqlExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// walDB opens (creating) a WAL database at path and commits rows rows of size bytes, which
// stay in its -wal: nothing checkpoints them.
func walDB(t *testing.T, path string, rows, size int) *sql.DB {
	t.Helper()
	db := openSQLite(t, path, "wal")
	sqlExec(t, db, "PRAGMA wal_autocheckpoint = 0")
	addRows(t, db, rows, size)
	return db
}

// copyDB copies the database from, and each of its sidecars named by suffixes, to to (mode
// 0644): a database as a crash, or a copy made while it was open, leaves it.
func copyDB(t *testing.T, from, to string, suffixes ...string) {
	t.Helper()
	for _, suffix := range append([]string{""}, suffixes...) {
		data, err := os.ReadFile(from + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// addRows commits n rows in one transaction, each holding size random bytes.
func addRows(t *testing.T, db *sql.DB, n, size int) {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := tx.Exec("INSERT INTO t (v) VALUES (randomblob(?))", size); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// rowStats is what a restored database holds: its rows' count and id range.
type rowStats struct{ count, minID, maxID int }

// checkDB opens the database file at path read-only, fails the test unless it passes
// integrity_check, and returns its rows' count and id range.
func checkDB(t *testing.T, path string) rowStats {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("%s: integrity_check %q, %v", path, check, err)
	}
	var s rowStats
	err = db.QueryRow("SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM t").Scan(&s.count, &s.minID, &s.maxID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func countRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// restoreArchive restores archive into a new folder and returns it.
func restoreTo(t *testing.T, archive string) string {
	t.Helper()
	dest := t.TempDir()
	if r := backup(t, runOpts{}, "restore", archive, dest); r.code != 0 {
		t.Fatalf("restore: exit %d\n%s", r.code, r.stderr)
	}
	return dest
}

// warningsOf lists the receipt's warnings as "PATH OP lost=BOOL".
func warningsOf(rc *format.Receipt) []string {
	var ws []string
	for _, w := range rc.Warnings {
		ws = append(ws, fmt.Sprintf("%s %s lost=%v", w.Path, w.Op, w.Lost))
	}
	return ws
}

// spoolsIn lists the staged snapshots left in dir.
func spoolsIn(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	for _, name := range listDir(t, dir) {
		if strings.HasPrefix(name, ".backup-spool-") {
			left = append(left, name)
		}
	}
	return left
}

// TestSQLiteLiveWriter backs up a WAL database while a writer commits two rows at a time
// every few milliseconds: the restored database passes integrity_check, holds at least the
// rows committed before the run and at most those committed after it, and they are
// contiguous and in pairs (each transaction wholly in or out).
func TestSQLiteLiveWriter(t *testing.T) {
	t.Parallel()
	mustTool(t, "sqlite3")
	dir := t.TempDir()
	path := filepath.Join(dir, "app", "state.db")
	os.MkdirAll(filepath.Dir(path), 0o755)
	db := openSQLite(t, path, "wal")
	sqlExec(t, db, "PRAGMA wal_autocheckpoint = 0") // the commits stay in -wal
	for range 40 {
		addRows(t, db, 2, 100<<10) // 8 MB
	}
	var stop atomic.Bool
	done := make(chan error)
	go func() {
		var err error
		for !stop.Load() && err == nil {
			_, err = db.Exec("INSERT INTO t (v) VALUES (randomblob(1000)), (randomblob(1000))")
			time.Sleep(2 * time.Millisecond)
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	before := countRows(t, db)
	archive := filepath.Join(dir, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	after := countRows(t, db)
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if r.code != exitComplete {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitComplete, r.stderr)
	}
	restored := filepath.Join(restoreTo(t, archive), "app", "state.db")
	got := checkDB(t, restored)
	t.Logf("rows before the run %d, in the snapshot %d, after %d", before, got.count, after)
	if got.count < before || got.count > after {
		t.Errorf("snapshot holds %d rows, want between %d and %d", got.count, before, after)
	}
	if got.minID != 1 || got.maxID != got.count || got.count%2 != 0 {
		t.Errorf("snapshot rows %+v: want ids 1 to count, in pairs", got)
	}
	// C SQLite, Debian's sqlite3, agrees.
	out, err := exec.Command("sqlite3", "-readonly", restored, "PRAGMA integrity_check; SELECT count(*) FROM t").CombinedOutput()
	if want := fmt.Sprintf("ok\n%d\n", got.count); err != nil || string(out) != want {
		t.Errorf("sqlite3 on the restored database: %q, %v; want %q", out, err, want)
	}
	entries := readZip(t, archive)
	for _, sidecar := range []string{"app/state.db-wal", "app/state.db-shm"} {
		if _, ok := entries[sidecar]; ok {
			t.Errorf("archive holds %s beside the snapshot", sidecar)
		}
	}
	if rc := readReceipt(t, archive+".receipt.json"); rc.Counts.Snapshots != 1 {
		t.Errorf("receipt counts %d snapshots, want 1", rc.Counts.Snapshots)
	}
}

// TestSQLiteLockedFailsClosed: a rollback-journal database held by BEGIN EXCLUSIVE longer
// than --sqlite-timeout is lost (op snapshot), not copied raw; the rest is archived, and no
// staged copy is left.
func TestSQLiteLockedFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "locked.db"), "delete")
	addRows(t, db, 10, 100)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(t.Context(), "ROLLBACK")
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	archive := filepath.Join(out, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "--sqlite-timeout", "300ms", "-o", archive, "app")
	if r.code != exitIncomplete || !strings.Contains(r.stderr, "lost app/locked.db: snapshot: ") {
		t.Fatalf("exit %d, want %d and the database lost\n%s", r.code, exitIncomplete, r.stderr)
	}
	rc := readReceipt(t, archive+".receipt.json")
	if got, want := warningsOf(rc), []string{"app/locked.db snapshot lost=true"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	entries := readZip(t, archive)
	if _, ok := entries["app/locked.db"]; ok {
		t.Error("the locked database is in the archive")
	}
	if entries["app/a.txt"] != "a" {
		t.Error("app/a.txt is not archived")
	}
	if left := spoolsIn(t, out); len(left) > 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}

// TestSQLiteInterrupted sends SIGINT while a snapshot waits for a locked database: the run
// stops (exit 130) without waiting out --sqlite-timeout, and leaves no staged copy.
func TestSQLiteInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "locked.db"), "delete")
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(t.Context(), "ROLLBACK")
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	cmd := exec.Command(binary, "create", "--sqlite-timeout", "1h", "-o", filepath.Join(out, "app.zip"), "app")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(30 * time.Second); len(spoolsIn(t, out)) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run never staged the snapshot")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	if left := leftovers(t, out, "app.zip.receipt.json"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
