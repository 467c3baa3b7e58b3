package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteStagingFullSaysNotAnError: the output folder (a 512 KiB tmpfs) has room
// for the archive but not for the staged copy of a 2 MB database. The database is lost, as
// documented, but the line cron mails read "lost app/big.db: snapshot: database or disk is
// full: not an error (13)": the driver words a backup step's error with the source
// connection's message, which is "not an error" (the same wording the locked case was cured
// of).
//
// Expected: one line naming the database and the cause (no room to stage its copy), and no
// "not an error".
func TestAttackSQLiteStagingFullSaysNotAnError(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, out, "512k")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "big.db"), "delete")
	sqlExec(t, db, "INSERT INTO t (v) VALUES (zeroblob(2000000))")
	r := backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(out, "b.zip"), "app")
	mustExit(t, r, exitIncomplete)
	line := lineAbout(r.stderr, "app/big.db")
	if !strings.Contains(line, "lost app/big.db: snapshot: ") || !strings.Contains(line, "full") || strings.Contains(line, "not an error") {
		t.Errorf("the line about app/big.db: %q; want it lost, the disk full, and no \"not an error\"", line)
	}
}
