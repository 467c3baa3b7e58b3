package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackSQLiteSlowQuickCheck: whoever may write into the tree lays out a tiny database
// whose table has a generated column, NOT NULL, computed by an expression that takes half a
// second a row (a 20 MB printf, replaced), here 100 rows (the schema can be rewritten after
// cheap inserts, so a million rows cost him nothing). The copy takes no time, but the run's
// PRAGMA quick_check of the staged copy computes that column for every row, and nothing
// bounds it: root's nightly run took 17 s here, and would take days (--sqlite-timeout bounds
// only the wait for a lock).
//
// Expected: the check is bounded (by --sqlite-timeout beyond what the database's size
// needs); a database whose check runs past it is lost, said why (exit 3), and the run ends.
func TestAttackSQLiteSlowQuickCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "slow.db"), "delete")
	sqlExec(t, db, "CREATE TABLE s (a INTEGER, g INTEGER NOT NULL AS (a + 1) VIRTUAL)")
	for i := range 100 {
		sqlExec(t, db, "INSERT INTO s (a) VALUES (?)", i)
	}
	// The expensive expression goes into the schema afterwards, as SQLite's writable_schema
	// lets its owner do; the inserts above cost nothing.
	sqlExec(t, db, "PRAGMA writable_schema = ON")
	sqlExec(t, db, `UPDATE sqlite_schema SET sql = 'CREATE TABLE s (a INTEGER, g INTEGER NOT NULL AS (length(replace(printf(''%.*c'', 20000000, ''x''), ''x'', ''yy'')) + a) VIRTUAL)' WHERE name = 's'`)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "create", "--sqlite-timeout", "1s", "-o", filepath.Join(dir, "b.zip"), "app")
	cmd.Dir = dir
	start := time.Now()
	r := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("the run was still checking the database after %v (killed)", time.Since(start).Round(time.Second))
	}
	mustExit(t, r, exitIncomplete)
	if !strings.Contains(r.stderr, "lost app/slow.db: snapshot: ") || !strings.Contains(r.stderr, "quick_check") {
		t.Errorf("stderr %q, want app/slow.db lost, its quick_check named", r.stderr)
	}
}
