package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ftsWithAppTokenizer makes, at path, the database of an application that indexes its text
// with FTS5 and a tokenizer of its own (registered by the application, as Calibre's or
// Signal's are): here unicode61's index, its schema then naming "apptok", as that
// application's would.
func ftsWithAppTokenizer(t *testing.T, path string) {
	t.Helper()
	db := openSQLite(t, path, "delete")
	addRows(t, db, 50, 200)
	sqlExec(t, db, "CREATE VIRTUAL TABLE f USING fts5(body)")
	sqlExec(t, db, "INSERT INTO f VALUES ('hello world'), ('goodbye world')")
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	sqlExec(t, db, "UPDATE sqlite_schema SET sql = 'CREATE VIRTUAL TABLE f USING fts5(body, tokenize = apptok)' WHERE name = 'f'")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAttackSQLiteAppTokenizerLost: a sound database with an FTS5 table whose tokenizer is
// the application's own. The run's PRAGMA quick_check of the copy asks each virtual table to
// check itself, and FTS5 cannot open the table without its tokenizer: the check failed, "SQL
// logic error", and the database was lost, every night.
//
// Expected: the snapshot is stored, the run complete (the b-trees of every table, the FTS5
// table's shadow tables included, are then checked one table at a time), and the restored
// database holds its rows and its index's text. A database so made and then damaged is
// still lost.
func TestAttackSQLiteAppTokenizerLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	ftsWithAppTokenizer(t, filepath.Join(dir, "app", "f.db"))
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	db := openSQLite(t, filepath.Join(restoreTo(t, archive), "app", "f.db"), "delete")
	if n := countRows(t, db); n != 50 {
		t.Errorf("the restored database holds %d rows of t, want 50", n)
	}
	var text string
	if err := db.QueryRow("SELECT group_concat(c0, ',') FROM f_content").Scan(&text); err != nil || text != "hello world,goodbye world" {
		t.Errorf("the restored FTS5 table's content %q, %v", text, err)
	}

	// Table t's root page, its cells' pointers overwritten: a b-tree no reader can walk.
	damaged := filepath.Join(dir, "damaged")
	makeTree(t, damaged, map[string]node{"a.txt": {content: "a"}})
	ftsWithAppTokenizer(t, filepath.Join(damaged, "f.db"))
	f, err := os.OpenFile(filepath.Join(damaged, "f.db"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 64)), 4096+8); err != nil { // page 2, t's root: the first cell pointers
		t.Fatal(err)
	}
	f.Close()
	r = backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "d.zip"), "damaged")
	mustExit(t, r, exitIncomplete)
	if !strings.Contains(r.stderr, "lost damaged/f.db: snapshot: ") {
		t.Errorf("stderr %q, want damaged/f.db lost", r.stderr)
	}
}
