package main

import (
	"path/filepath"
	"testing"
)

// TestAttackSQLiteStandInNULPoisonsLaterDatabases: a database whose schema text goes on past
// a NUL byte, where SQLite stops reading it (it parses the text as a C string), with a
// generated column there calling "count\x00x" and "zeroblob\x00x". The run read that text to
// its end, took each for a function SQLite lacks, and registered a stand-in: the driver hands
// the name to SQLite as a C string, so the stand-in, variadic and returning 0, replaced
// SQLite's own count() and zeroblob() on every connection opened after it in the process.
// Every later database of the run whose check used them was then lost: one that a STRICT
// table's BLOB column computes with zeroblob() ("cannot store INT value in BLOB column"), and
// one with an FTS5 table of its application's tokenizer, which is checked one table at a
// time only after "SELECT count(*)" over its schema finds a virtual table.
//
// Expected: the run is complete, and the later databases are stored.
func TestAttackSQLiteStandInNULPoisonsLaterDatabases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "a.db"), "delete")
	sqlExec(t, db, "CREATE TABLE g (a, b AS (0))")
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	sqlExec(t, db, "UPDATE sqlite_schema SET sql = CAST(? AS TEXT) WHERE name = 'g'",
		[]byte("CREATE TABLE g (a, b AS (0))\x00, c AS (\"count\x00x\"(a) + \"zeroblob\x00x\"(a))"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openSQLite(t, filepath.Join(dir, "app", "b.db"), "delete")
	sqlExec(t, db, "CREATE TABLE s (n INTEGER, pad BLOB AS (zeroblob(n)) NOT NULL) STRICT")
	sqlExec(t, db, "INSERT INTO s (n) VALUES (4)")
	addRows(t, db, 5, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ftsWithAppTokenizer(t, filepath.Join(dir, "app", "c.db"))
	archive := filepath.Join(dir, "b.zip")
	// --jobs 1: the databases are checked in walk order, a.db first.
	r := backup(t, runOpts{dir: dir}, "create", "--jobs", "1", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	restored := restoreTo(t, archive)
	if got := checkDB(t, filepath.Join(restored, "app", "b.db")); got.count != 5 {
		t.Errorf("the restored b.db holds %d rows of t, want 5", got.count)
	}
	if n := countRows(t, openSQLite(t, filepath.Join(restored, "app", "c.db"), "delete")); n != 50 {
		t.Errorf("the restored c.db holds %d rows of t, want 50", n)
	}
}
