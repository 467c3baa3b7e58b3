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
	dir, tmp := stagedDatabaseTree(t)
	r := createUnderStrace(t, dir, tmp, os.DevNull, "unlinkat:error=EIO:when=1",
		"--recipient", key.recipient, "-o", filepath.Join(dir, "out.zip.age"))
	if n := stagedBytes(t, tmp); n > 0 {
		t.Errorf("%d bytes of the database's plaintext copy are left in $TMPDIR: %q", n, spoolsIn(t, tmp))
	}
	const lost = "  lost app/app.db: snapshot: removing the staged copy " // then its path and the error
	if r.code != exitIncomplete || !strings.Contains(r.stderr, lost) || !strings.Contains(r.stderr, " (emptied instead): input/output error\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and a line %q…", r.code, r.stderr, exitIncomplete, lost)
	}
}

// TestStageWithoutFlock: where $TMPDIR's file system has no flock (ENOLCK: NFS without its
// lock daemon), a database is staged unlocked and backed up, as before the sweep of killed
// runs' copies: no run can lock such a copy to sweep it either. It was lost (exit 3).
func TestStageWithoutFlock(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir, tmp := stagedDatabaseTree(t)
	r := createUnderStrace(t, dir, tmp, os.DevNull, "flock:error=ENOLCK", "-q", "--sqlite", "auto", "-o", "-", "--receipt", "r.json")
	if r.code != exitComplete || r.stderr != "" {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and nothing", r.code, r.stderr, exitComplete)
	}
	if left := spoolsIn(t, tmp); len(left) > 0 {
		t.Errorf("$TMPDIR holds %q", left)
	}
}

// stagedDatabaseTree makes dir/app, holding a SQLite database (which a run stages), and an
// empty dir/tmp for $TMPDIR.
func stagedDatabaseTree(t *testing.T) (dir, tmp string) {
	t.Helper()
	dir = t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "app.db"), "delete")
	addRows(t, db, 10, 1<<10)
	db.Close()
	tmp = filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	return dir, tmp
}

// createUnderStrace runs create with flags on app in dir, $TMPDIR tmp, under strace with
// the fault inject (SYSCALL:…) and its log in log; on one thread of Go's (GOMAXPROCS=1).
func createUnderStrace(t *testing.T, dir, tmp, log, inject string, flags ...string) result {
	t.Helper()
	call, _, _ := strings.Cut(inject, ":")
	args := append([]string{"-f", "-qq", "-o", log, "-e", "trace=" + call, "-e", "inject=" + inject, binary, "create"}, flags...)
	cmd := exec.Command("strace", append(args, "app")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOMAXPROCS=1")
	return runCmd(t, cmd)
}
