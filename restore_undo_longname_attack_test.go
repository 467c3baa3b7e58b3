package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackBeforeStateLongDestName restores with --force into a DEST whose name is 240
// bytes (NAME_MAX is 255). The before-state is named after DEST (DEST-before-restore-TIME.zip
// and .receipt.json), past 255 bytes: "file name too long; nothing restored", so no restore
// with --force into such a folder could be done with an undo. Correct: the before-state's
// name holds DEST's name cut short enough to fit, the restore is done, and its undo puts
// back what was there.
func TestAttackBeforeStateLongDestName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "archived\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	dest := filepath.Join(dir, strings.Repeat("L", 240))
	makeTree(t, dest, map[string]node{"app/f.txt": {content: "mine\n"}})

	r := backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--json", "a.zip", dest)
	mustExit(t, r, exitComplete)
	assertContent(t, filepath.Join(dest, "app/f.txt"), "archived\n")
	out := restoreJSONOf(t, r)
	if out.Undo == nil {
		t.Fatalf("no before-state: %s", r.stderr)
	}
	for _, p := range []string{out.Undo.Archive, out.Undo.Receipt} {
		if len(filepath.Base(p)) > 255 || !exists(p) || filepath.Dir(p) != dir {
			t.Errorf("before-state file %q: want it in %s, its name at most 255 bytes", p, dir)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--no-undo", "--same-permissions", "--xattrs", out.Undo.Archive, dest), exitComplete)
	assertContent(t, filepath.Join(dest, "app/f.txt"), "mine\n")
	if entries, _ := os.ReadDir(dir); len(entries) != 6 { // app, a.zip, its receipt, DEST, the before-state and its receipt
		t.Errorf("%d names in DEST's parent, want 6", len(entries))
	}
}
