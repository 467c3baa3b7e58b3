package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoRevertsEditOfFileKeptAsPresent: restore --force keeps app/a.txt, which DEST
// holds with the archived bytes, and gives it only its archived mode (0644 where it was
// 0600); the before-state saves it. The user then edits app/a.txt and runs the printed undo:
// it put the saved app/a.txt over the user's edit and said complete (exit 0), though the
// docs promise that a file the before-state saved is put back only where DEST holds the
// file the restore left there or the saved one. The before-state's "replaced" records
// listed the files the restore wrote over others only; a file kept and given another owner,
// mode or mtime is recorded there now too, with the bytes it kept, so the undo leaves an
// edit of it, with a warning, as it leaves an edit of a file the restore wrote.
func TestAttackUndoRevertsEditOfFileKeptAsPresent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "archived\n", mode: 0o644}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "archived\n", mode: 0o600}})
	a := filepath.Join(dest, "app/a.txt")
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	if st, err := os.Stat(a); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("app/a.txt after the restore: %v %v, want mode 0644", st, err)
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
