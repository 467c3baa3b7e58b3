package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreUnreachableDestPanics: a DEST the kernel cannot reach (DEST/missing/../x:
// the missing folder makes the .. fail) took no lock, and the restore then read the lock's
// Ignored through a nil lock: its one line, then a Go panic and its goroutine dump, exit 2,
// and no --json. Correct: the one line naming DEST and the cause, exit 1, --json failed.
func TestAttackRestoreUnreachableDestPanics(t *testing.T) {
	t.Parallel()
	f := newLockFixture(t)
	dest := filepath.Join(f.dir, "missing") + "/../x"
	r := backup(t, runOpts{dir: f.dir}, "restore", f.arch, dest)
	want := "backup restore: DEST " + dest + ": no such file or directory\n"
	if r.code != exitFailed || r.stderr != want {
		t.Errorf("restore into %s: exit %d, stderr %q; want 1, %q", dest, r.code, r.stderr, want)
	}
	r = backup(t, runOpts{dir: f.dir}, "restore", "--json", f.arch, dest)
	var out struct{ Status, Error string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != exitFailed || out.Status != "failed" ||
		!strings.Contains(out.Error, "no such file or directory") || strings.Contains(r.stderr, "panic") {
		t.Errorf("restore --json into %s: exit %d, stdout %q (%v), stderr %q; want 1, status failed", dest, r.code, r.stdout, err, r.stderr)
	}
}
