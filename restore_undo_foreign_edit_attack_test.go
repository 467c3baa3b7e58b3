package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoRevertsEditAfterForeignRestore: restore --force of a zip of another tool (no
// manifest) replaces app/a.txt; the user then edits app/a.txt and runs the printed undo. It
// put the saved app/a.txt back over the user's edit and said complete (exit 0), though the
// docs promise a file the before-state saved is put back only where DEST holds the file the
// restore wrote there or the saved one: the before-state's "replaced" records were made from
// the manifest's SHA-256 only, and an archive without one left them empty, which the undo
// read as nothing to compare. The restore now hashes the entries it writes over others
// when the archive records no SHA-256 for them.
func TestAttackUndoRevertsEditAfterForeignRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "foreign.zip")
	writeForeignZip(t, arch, map[string]string{"app/a.txt": "archived\n"})
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "before the restore\n", mode: 0o644}})
	a := filepath.Join(dest, "app/a.txt")
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	if got := string(readFile(t, a)); got != "archived\n" {
		t.Fatalf("app/a.txt after the restore: %q", got)
	}
	undo := printedUndo(t, r.stderr)

	writeFile(t, a, "the user's edit, after the restore\n")
	u := backup(t, runOpts{dir: dir}, undo...)
	if got := string(readFile(t, a)); got != "the user's edit, after the restore\n" {
		t.Errorf("the undo (exit %d) put %q in app/a.txt over the user's edit, made after the restore it undoes:\n%s", u.code, got, u.stderr)
	}
	if u.code != exitComplete || !strings.Contains(u.stderr, "app/a.txt: not put back: ") {
		t.Errorf("undo: exit %d, want %d and a warning that app/a.txt stays\n%s", u.code, exitComplete, u.stderr)
	}
}
