package main

import (
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"
)

var registerAppColl = sync.OnceValue(func() error {
	return sqlite.RegisterCollationUtf8("appcoll", func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
})

// TestAttackSQLiteAppCollationLost: a sound database of an application that defines its own
// collation (as Android's LOCALIZED, or any app's "NOCASE_UTF8"): a WITHOUT ROWID table and an
// index use COLLATE appcoll. The online backup copies it whole, but the run's PRAGMA
// quick_check of the copy failed, "no such collation sequence: appcoll", since the backup
// does not know the application's collation: the database was lost, every night.
//
// Expected: the snapshot is stored, the run complete (quick_check, which does not check an
// index's order, needs only some collation by that name), and the restored database holds
// its rows.
func TestAttackSQLiteAppCollationLost(t *testing.T) {
	t.Parallel()
	if err := registerAppColl(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "c.db"), "delete")
	sqlExec(t, db, `CREATE TABLE w (k TEXT COLLATE "appcoll" PRIMARY KEY, v) WITHOUT ROWID`)
	sqlExec(t, db, "CREATE INDEX ti ON t (v COLLATE appcoll)")
	for i := range 50 {
		sqlExec(t, db, "INSERT INTO w VALUES (?, 1)", strings.Repeat("k", i+1))
	}
	addRows(t, db, 5, 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "c.db")); got.count != 5 {
		t.Errorf("the restored database holds %d rows of t, want 5", got.count)
	}
}

var registerAppFuncs = sync.OnceValue(func() error {
	err := sqlite.RegisterDeterministicScalarFunction("appfn", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return fmt.Sprint(args[0], "!"), nil
	})
	if err != nil {
		return err
	}
	return sqlite.RegisterDeterministicScalarFunction("appnum", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return args[0].(int64) * 2, nil
	})
})

// TestAttackSQLiteAppFunctionLost: a sound database of an application that defines its own
// SQL functions and computes its tables' generated columns with them (the default kind,
// VIRTUAL: computed on each read, never stored). The run's PRAGMA quick_check of the copy
// computes such a column to check its type, and NOT NULL, and failed, "unknown function:
// appfn()": the database was lost, every night.
//
// Expected: the snapshot is stored, the run complete (the column's value is not in the
// database's pages, so what stands in for the function does not weaken the check), and the
// restored database, opened by the application, computes its columns.
func TestAttackSQLiteAppFunctionLost(t *testing.T) {
	t.Parallel()
	if err := registerAppFuncs(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "f.db"), "wal")
	sqlExec(t, db, "CREATE TABLE g (a TEXT, n TEXT AS (appfn(a)) NOT NULL)")
	// m's NOT NULL holds for the application (a is never 0), and must for a stand-in too.
	sqlExec(t, db, `CREATE TABLE s (a INTEGER, n INTEGER GENERATED ALWAYS AS (1 + "AppNum"(a)) NOT NULL, m INTEGER AS (100 / appnum(a)) NOT NULL) STRICT`)
	sqlExec(t, db, "INSERT INTO g (a) VALUES ('x'), ('y')")
	sqlExec(t, db, "INSERT INTO s (a) VALUES (20)")
	addRows(t, db, 5, 100)
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	restored := filepath.Join(restoreTo(t, archive), "app", "f.db")
	if got := checkDB(t, restored); got.count != 5 {
		t.Errorf("the restored database holds %d rows of t, want 5", got.count)
	}
	rdb := openSQLite(t, restored, "wal")
	var names string
	var n int64
	if err := rdb.QueryRow("SELECT group_concat(n, ' ') FROM g").Scan(&names); err != nil || names != "x! y!" {
		t.Errorf("the restored g computes %q, %v; want \"x! y!\"", names, err)
	}
	var m int64
	if err := rdb.QueryRow("SELECT n, m FROM s").Scan(&n, &m); err != nil || n != 41 || m != 2 {
		t.Errorf("the restored s computes %d and %d, %v; want 41 and 2", n, m, err)
	}
}
