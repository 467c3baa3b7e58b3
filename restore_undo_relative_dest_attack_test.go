package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackPrintedUndoRelativeDest: restore --force with DEST given relative (cd /srv;
// backup restore --force A.zip www) printed "undo: backup restore --force … /srv/www-before-
// restore-….zip www": the before-state's path absolute, DEST as typed. Run later from
// another folder (the home), as it is printed to be, it restored the before-state into a new
// folder www there and said complete (exit 0), and the DEST the restore changed stayed
// changed. The printed undo names DEST by its absolute path now, as the before-state.
func TestAttackPrintedUndoRelativeDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	makeTree(t, filepath.Join(dir, "dest"), map[string]node{"app/a.txt": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, "dest")
	mustExit(t, r, exitComplete)
	undo := printedUndo(t, r.stderr)

	elsewhere := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	u := backup(t, runOpts{dir: elsewhere}, undo...)
	if got := string(readFile(t, filepath.Join(dir, "dest/app/a.txt"))); got != "mine\n" {
		t.Errorf("the printed undo %q run from another folder (exit %d) left DEST's app/a.txt %q, not put back:\n%s", undo, u.code, got, u.stderr)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "dest")); err == nil {
		t.Errorf("the printed undo %q run from another folder made a new DEST there", undo)
	}
}
