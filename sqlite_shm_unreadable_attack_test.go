package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteUnreadableShmSaysWhy: a live WAL database (its writer's connection open)
// whose -shm only its owner may read (0600, root's), backed up as nobody, who may read the
// database and its -wal. SQLite cannot read it without the -shm, and the database is lost,
// as it must be; but the line said "unable to open database file: not an error (14)" (and,
// once a step's errors were worded by their code, "Unable to open the database file"): no
// cause.
//
// Expected: the line names the -shm and the permission it lacks.
func TestAttackSQLiteUnreadableShmSaysWhy(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	db := filepath.Join(app, "s.db")
	walDB(t, db, 4, 100)
	if err := os.Chmod(db+"-shm", 0o600); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-o", filepath.Join(dir, "b.zip"), "app")
	mustExit(t, r, exitIncomplete)
	line := lineAbout(r.stderr, "app/s.db")
	if !strings.Contains(line, "lost app/s.db: snapshot: ") || !strings.Contains(line, "-shm") || !strings.Contains(line, "permission denied") || strings.Contains(line, "not an error") {
		t.Errorf("the line about app/s.db: %q; want it lost, its -shm named, permission denied, no \"not an error\"", line)
	}
}
