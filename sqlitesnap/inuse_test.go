package sqlitesnap

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteLockDroppedByAnotherClose: SQLite's shared lock, which keeps a
// rollback-journal database's writer out while it is copied, is an fcntl lock, and closing
// any descriptor of the database drops it. The walk opens the database beside each -journal
// it meets, to tell whether that is a sidecar, and closed it at once: with a writer
// committing in a loop and a -journal (journal_mode=persist) after 150 other files beside a
// 60 MB database, 1 snapshot in 10 held table a from one commit and table b from another (a
// 36183, b 36192), quick_check ok, the run complete.
//
// Expected: a descriptor closed with Close while the database is copied keeps SQLite's lock
// until the copy is done, and is closed then.
func TestAttackSQLiteLockDroppedByAnotherClose(t *testing.T) {
	if _, err := osexec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	w := openDB(t, path, "delete")
	insertRows(t, w, 10)
	w.Close()

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := startReading(f)
	defer func() { done() }()
	db, err := sql.Open("sqlite", uri(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil { // takes the shared lock
		t.Fatal(err)
	}

	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Close(other); err != nil {
		t.Fatal(err)
	}
	if got := exclusive(t, path); !strings.Contains(got, "locked") {
		t.Fatalf("a writer got the database while it was read: %q", got)
	}
	done()
	done = func() {}
	if _, err := other.Stat(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("the descriptor Close kept is still open once the copy is done: %v", err)
	}
}

// TestTakeKeepsClosesUntilCopied: Take marks its database as read by SQLite: a descriptor
// of it closed with Close meanwhile stays open until Take is done.
func TestTakeKeepsClosesUntilCopied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	w := openDB(t, path, "delete")
	insertRows(t, w, 10)
	w.Close()
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var openWhileCopied bool
	opts := Options{Dir: t.TempDir(), beforeOpen: func() { Close(other) }, backedUp: func() {
		_, err := other.Stat()
		openWhileCopied = err == nil
	}}
	s, err := Take(t.Context(), source(t, path), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !openWhileCopied {
		t.Error("a descriptor of the database was closed while SQLite copied it")
	}
	if _, err := other.Stat(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("the descriptor Close kept is still open after Take: %v", err)
	}
}

// exclusive tries, in another process, to take the database at path for writing at once,
// and returns what SQLite said ("ok" when it could).
func exclusive(t *testing.T, path string) string {
	t.Helper()
	out, _ := osexec.Command("python3", "-c", `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    c.execute("BEGIN EXCLUSIVE")
    print("ok")
except sqlite3.OperationalError as e:
    print(e)
`, path).CombinedOutput()
	return strings.TrimSpace(string(out))
}
