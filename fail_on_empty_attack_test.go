package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackFailOnEmptyCountsNothing: `--fail-on "$KINDS"` with the variable unset or empty
// was taken as no kinds at all (the flag's comma list of nothing), where `--fail-on
// vanished,` is a usage error: a run the script meant to fail on a vanished file says
// complete, exit 0, and a backup was written.
// Correct: an empty --fail-on is a usage error (exit 2, one line), as every empty path flag
// is, and nothing is written.
func TestAttackFailOnEmptyCountsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "x\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "--fail-on", "", "-o", "out.zip", "app")
	mustExit(t, r, exitUsage)
	if !strings.HasPrefix(r.stderr, "backup create: --fail-on is empty") {
		t.Errorf("stderr does not name the empty flag:\n%s", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "out.zip")); err == nil {
		t.Error("an archive was written")
	}
}
