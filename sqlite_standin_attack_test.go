package main

import (
	be "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestAttackSQLiteFallbackHidesCrossLinkedPages: a damaged database, its free list naming a
// page of table t's b-tree (the next page SQLite allocates overwrites t's rows), and a row
// written into sqlite_schema for a virtual table whose constructor fails (FTS5 with an option
// it does not know). Its whole PRAGMA quick_check then failed to prepare, before checking a
// single page, and the run checked it one table at a time: sqlite_schema's check walks the
// free list, and t's its b-tree, each alone, and neither sees a page that both use. The
// damaged database was stored as if sound.
//
// Expected: the database is lost (exit 3): the whole check never ran.
func TestAttackSQLiteFallbackHidesCrossLinkedPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged")
	makeTree(t, damaged, map[string]node{"a.txt": {content: "a"}})
	path := filepath.Join(damaged, "x.db")
	db := openSQLite(t, path, "delete")
	addRows(t, db, 200, 100)
	sqlExec(t, db, "CREATE TABLE junk (v)")
	sqlExec(t, db, "INSERT INTO junk VALUES (randomblob(20000))")
	sqlExec(t, db, "DROP TABLE junk") // its pages go onto the free list
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	sqlExec(t, db, "INSERT INTO sqlite_schema VALUES ('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING fts5(x, nosuchoption = 1)')")
	var root uint32
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 't'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(be.BigEndian.Uint16(data[16:]))
	trunk := int(be.BigEndian.Uint32(data[32:])) // the header's first free-list trunk page
	if trunk == 0 || be.BigEndian.Uint32(data[(trunk-1)*pageSize+4:]) == 0 {
		t.Fatal("the free list has no leaf to point at t's root")
	}
	be.BigEndian.PutUint32(data[(trunk-1)*pageSize+8:], root) // its first leaf
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "d.zip"), "damaged")
	mustExit(t, r, exitIncomplete)
	if !strings.Contains(r.stderr, "lost damaged/x.db: snapshot: ") {
		t.Errorf("stderr %q, want damaged/x.db lost", r.stderr)
	}
}

// TestAttackSQLiteStandInsSpentByAnotherDatabase: a database whose generated columns call
// 1,000 functions of names no application has, and name 1,000 collations, checked first in
// a run. The run took at most 1,000 stand-ins of each per process, shared by every database
// after: that one took them all, and a later sound database of an application with its own
// function and collation was lost, "unknown function: appfn()", every night the other file
// sat in the tree.
//
// Expected: the run is complete; the later database is stored.
func TestAttackSQLiteStandInsSpentByAnotherDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "a.db"), "delete")
	sqlExec(t, db, "CREATE TABLE g0 (a)")
	sqlExec(t, db, "CREATE TABLE g1 (a)")
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	for table := range 2 { // 500 of each a table: SQLite takes up to 2,000 columns
		var cols []string
		for i := table * 500; i < (table+1)*500; i++ {
			cols = append(cols, fmt.Sprintf("g%d AS (spend%d(a)), c%d COLLATE spend%d", i, i, i, i))
		}
		sqlExec(t, db, "UPDATE sqlite_schema SET sql = ? WHERE name = ?", fmt.Sprintf("CREATE TABLE g%d (a, %s)", table, strings.Join(cols, ", ")), fmt.Sprint("g", table))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openSQLite(t, filepath.Join(dir, "app", "b.db"), "delete")
	sqlExec(t, db, "CREATE TABLE u (a TEXT, k TEXT)")
	sqlExec(t, db, "CREATE INDEX uk ON u (k)")
	sqlExec(t, db, "INSERT INTO u VALUES ('x', 'y')")
	addRows(t, db, 5, 100)
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	sqlExec(t, db, "UPDATE sqlite_schema SET sql = 'CREATE TABLE u (a TEXT, k TEXT COLLATE appcoll, n TEXT AS (appfn(a)) NOT NULL)' WHERE name = 'u'")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "b.zip")
	// --jobs 1: the databases are checked in walk order, a.db first.
	r := backup(t, runOpts{dir: dir}, "create", "--jobs", "1", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	if n := countRows(t, openSQLite(t, filepath.Join(restoreTo(t, archive), "app", "b.db"), "delete")); n != 5 {
		t.Errorf("the restored b.db holds %d rows of t, want 5", n)
	}
}

// TestAttackSQLiteFallbackSkipsRTree: a database with an FTS5 table of its application's
// tokenizer, and an R*Tree index whose %_rowid table maps an entry to the wrong node (each
// b-tree sound; a search by that entry's box misses it). Its whole check failed at the FTS5
// table, before the R*Tree's own check, and the run's check one table at a time went over
// tables with b-trees only: the damaged database was stored as sound.
//
// Expected: it is lost; the same database, its R*Tree sound, is stored.
func TestAttackSQLiteFallbackSkipsRTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"sound", "damaged"} {
		makeTree(t, filepath.Join(dir, name), map[string]node{"a.txt": {content: "a"}})
		path := filepath.Join(dir, name, "x.db")
		db := openSQLite(t, path, "delete")
		sqlExec(t, db, "CREATE VIRTUAL TABLE r USING rtree(id, x0, x1)")
		for i := range 100 {
			sqlExec(t, db, "INSERT INTO r VALUES (?, ?, ?)", i, i, i+1)
		}
		if name == "damaged" {
			sqlExec(t, db, "UPDATE r_rowid SET nodeno = nodeno + 1 WHERE rowid = 5")
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		ftsWithAppTokenizer(t, path)
	}
	r := backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "s.zip"), "sound")
	mustExit(t, r, exitComplete)
	r = backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "d.zip"), "damaged")
	mustExit(t, r, exitIncomplete)
	if !strings.Contains(r.stderr, "lost damaged/x.db: snapshot: the copy fails quick_check: In RTree") {
		t.Errorf("stderr %q, want damaged/x.db lost, its R*Tree named", r.stderr)
	}
}
