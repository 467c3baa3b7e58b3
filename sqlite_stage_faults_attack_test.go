package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSealedStageUnlinkEIOLeavesPlaintext: an encrypted run stages a database's
// snapshot in $TMPDIR, and the unlink of the staged copy's name fails (EIO, the run's first
// unlinkat). The run said complete, exit 0, with the whole database left in plaintext in
// $TMPDIR under .backup-spool-sqlite-…, and not a word of it (faults pass).
// Correct: a copy whose name cannot go is emptied, the database is lost in one line, exit 3.
func TestAttackSealedStageUnlinkEIOLeavesPlaintext(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "app.db"), "delete")
	addRows(t, db, 10, 1<<10)
	db.Close()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	out := filepath.Join(dir, "out.zip.age")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=unlinkat", "-e", "inject=unlinkat:error=EIO:when=1",
		binary, "create", "--recipient", key.recipient, "-o", out, "app")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOMAXPROCS=1")
	r := runCmd(t, cmd)
	if n := stagedBytes(t, tmp); n > 0 {
		t.Errorf("%d bytes of the database's plaintext copy are left in $TMPDIR: %q", n, spoolsIn(t, tmp))
	}
	const lost = "  lost app/app.db: snapshot: removing the staged copy " // then its path and the error
	if r.code != exitIncomplete || !strings.Contains(r.stderr, lost) || !strings.Contains(r.stderr, " (emptied instead): input/output error\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and a line %q…", r.code, r.stderr, exitIncomplete, lost)
	}
}
