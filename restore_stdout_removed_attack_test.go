package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreStdoutIntoUndoneFile runs the undo of a restore (its before-state,
// restored with --force) with stdout appended (>>) to a file that restore created, which
// the undo removes. The stdout check asked the plan only whether it writes that name
// (Plan.Writes), not whether it removes it: the undo removed the file, wrote its --json
// report into the removed one, which no name reaches, and exited 0; the report was lost.
// Correct: exit 2 with one line, the file where it was, as it was.
func TestAttackRestoreStdoutIntoUndoneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"new.txt": {content: "new\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	if err := os.Mkdir(filepath.Join(dir, "dest"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--json", "a.zip", "dest")
	mustExit(t, r, exitComplete)
	var out struct {
		Undo struct{ Archive, Flags string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Undo.Archive == "" {
		t.Fatalf("no undo in %q: %v", r.stdout, err)
	}
	path := filepath.Join(dir, "dest/app/new.txt")
	args := append([]string{"restore", "--force", "--json"}, strings.Fields(out.Undo.Flags)...)
	code, stderr, changed := appendStdout(t, dir, path, append(args, out.Undo.Archive, "dest")...)
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || changed {
		t.Errorf("%q >> %s: exit %d, stderr %q, changed or gone %v; want 2, one line, unchanged", args, path, code, stderr, changed)
	}
}
