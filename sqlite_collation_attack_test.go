package main

import (
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
