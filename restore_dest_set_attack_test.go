package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreIntoSetFolder restores, with --force, an archive whose one entry is named
// LATEST (a backed-up file of that name) with DEST a backup set's folder. The restore
// replaced the set's LATEST with the file's bytes, outside the set's lock: the set's pointer
// now named junk, and any entry named like a run (NAME.zip and its receipt) would have
// become one of the set's runs. create refuses -o into a set folder for the same reason.
// Correct: DEST that is a backup set is refused up front (exit 2, one line naming it), and
// the set and DEST's parent are as they were.
func TestAttackRestoreIntoSetFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	makeTree(t, filepath.Join(dir, "ev"), map[string]node{"LATEST": {content: "junk.zip\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	latest := readLatest(t, set)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ev.zip", "ev/LATEST"), exitComplete)
	parent, _ := os.ReadDir(dir)

	for _, args := range [][]string{{"restore", "--force", "ev.zip", set}, {"restore", "ev.zip", set + "/"}} {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitUsage)
		if !strings.Contains(r.stderr, "backup set") || !strings.Contains(r.stderr, "set") {
			t.Errorf("%q: stderr = %q, want it to name the set", args, r.stderr)
		}
	}
	if got := readLatest(t, set); got != latest {
		t.Errorf("LATEST = %q, want %q", got, latest)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(parent) {
		t.Errorf("DEST's parent holds %d names, want %d (no before-state)", len(after), len(parent))
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "status", set), exitComplete)
}
