package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteLockedSaysNotAnError: a home folder's browser profile holds a database its
// running application keeps locked (BEGIN EXCLUSIVE; a browser's locking_mode=EXCLUSIVE).
// The run is incomplete by design (fail closed, docs/sqlite.md), but the one line cron
// mails said "lost app/locked.db: snapshot: database is locked: not an error (5)
// (SQLITE_BUSY) (still locked after 300ms)": the driver's words, one of which says it is no
// error. Correct: the line says the database is locked, for how long it was waited for,
// and the way out, without the driver's words.
func TestAttackSQLiteLockedSaysNotAnError(t *testing.T) {
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
	r := backup(t, runOpts{dir: dir}, "create", "--sqlite-timeout", "300ms", "-o", "app.zip", "app")
	mustExit(t, r, exitIncomplete)
	want := "lost app/locked.db: snapshot: the database is locked by another process (still locked after 300ms; --sqlite-timeout waits longer)\n"
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "not an error") || strings.Contains(r.stderr, "SQLITE_") {
		t.Errorf("stderr:\n%s\nwant the line:\n%s", r.stderr, want)
	}
}
