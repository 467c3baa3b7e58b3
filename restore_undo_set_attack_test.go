package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackBeforeStateDefaultFolderIsSet restores with --force into a DEST inside a backup
// set's folder (SET/r), with no --undo-dir. The before-state went to DEST's parent, the set
// itself, as r-before-restore-TIME.zip with its receipt: status listed it as one of the set's
// runs (the newest complete one, which prune --keep-last 1 keeps), the very thing an explicit
// --undo-dir SET is refused for. Correct: the restore is refused before anything is written
// (exit 1, one line naming the set and the way out), and the set holds only its own runs.
func TestAttackBeforeStateDefaultFolderIsSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "new\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	before, _ := os.ReadDir(set)
	dest := filepath.Join(set, "r")
	makeTree(t, dest, map[string]node{"app/f.txt": {content: "mine\n"}})

	r := backup(t, runOpts{dir: dir}, "restore", "--force", set, dest)
	mustExit(t, r, exitFailed)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(r.stderr, set) || !strings.Contains(r.stderr, "--undo-dir") {
		t.Errorf("stderr = %q, want one line naming %s and --undo-dir", r.stderr, set)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, "app/f.txt")); string(got) != "mine\n" {
		t.Errorf("DEST's file = %q, want it untouched", got)
	}
	after, _ := os.ReadDir(set)
	if len(after) != len(before)+1 { // the restore's DEST, r, and nothing else
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Errorf("the set holds %q, want its own runs and r only", names)
	}
	st := backup(t, runOpts{dir: dir}, "status", set)
	if strings.Contains(st.stdout, "before-restore") {
		t.Errorf("status lists a before-state as a run of the set:\n%s", st.stdout)
	}
}
