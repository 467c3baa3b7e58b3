package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreTreeHoldingLatestFile: a backed-up tree that holds a file of its own named
// LATEST (a release folder's pointer, say) could be restored once, into a new folder, and
// never again: a second restore (the re-run that finishes an interrupted one) and
// restore --force over the tree (the snapshot before an upgrade put back) were refused, exit
// 1, "a folder in DEST, is a backup set (it holds LATEST)"; and restore --force into a
// folder whose parent holds such a file was refused too, as the before-state would go into a
// set, and one into the folder that holds it was a usage error. A folder is a set's when it holds the set's lock file or a LATEST that names a run;
// both restores go ahead, and a set copied without its lock file is still refused.
func TestRestoreTreeHoldingLatestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"releases/LATEST": {content: "v1.2.3\n"},
		"releases/notes":  {content: "x\n"},
	})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	for _, args := range [][]string{
		{"restore", "-q", "a.zip", "dest"},
		{"restore", "-q", "a.zip", "dest"},
		{"restore", "-q", "--force", "a.zip", "dest"},
		// DEST's parent, dest/app/releases, holds the file LATEST: the before-state goes there.
		{"restore", "-q", "--force", "a.zip", "dest/app/releases/x"},
		{"restore", "-q", "--force", "a.zip", "dest/app/releases/x"},
		// DEST itself holds it.
		{"restore", "-q", "a.zip", "dest/app/releases"},
	} {
		mustExit(t, backup(t, runOpts{dir: dir}, args...), exitComplete)
	}
	if got := string(readFile(t, filepath.Join(dir, "dest/app/releases/LATEST"))); got != "v1.2.3\n" {
		t.Errorf("LATEST = %q, want the backed-up file's bytes", got)
	}

	// A set copied without its lock file is still a set's folder.
	set := filepath.Join(dir, "d2", "app")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	if err := os.Remove(filepath.Join(set, ".backup.lock")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "a.zip", "d2")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "is a backup set (it holds LATEST)") {
		t.Errorf("stderr = %q, want the set's folder refused", r.stderr)
	}
}
