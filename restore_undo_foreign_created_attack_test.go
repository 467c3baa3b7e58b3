package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackUndoLeavesFileCreatedFromForeignZip: restore --force of a zip of another tool (no
// manifest) replaces app/a.txt and creates app/new.txt; its printed undo put app/a.txt back
// and said complete (exit 0), but left app/new.txt, with no warning: the before-state's
// "created" listed the files whose SHA-256 a manifest records only, so DEST was not as it
// was before the restore. The restore now hashes such an entry's checked bytes for the
// record, as for "replaced".
func TestAttackUndoLeavesFileCreatedFromForeignZip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "foreign.zip")
	writeForeignZip(t, arch, map[string]string{"app/a.txt": "archived app/a.txt\n", "app/new.txt": "archived app/new.txt\n"})
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "before the restore\n", mode: 0o644}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	undo := printedUndo(t, r.stderr)

	u := backup(t, runOpts{dir: dir}, undo...)
	if got := string(readFile(t, filepath.Join(dest, "app/a.txt"))); got != "before the restore\n" {
		t.Errorf("app/a.txt after the undo: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dest, "app/new.txt")); err == nil {
		t.Errorf("the undo (exit %d) left app/new.txt, which the restore it undoes created:\n%s", u.code, u.stderr)
	}
	mustExit(t, u, exitComplete)
}
