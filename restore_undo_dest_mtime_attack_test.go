package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackUndoLeavesDestMtimeMoved: restore --force into DEST, whose only top-level name,
// app, exists already, then the printed undo: app and everything in it came back as it
// was, mtimes to the nanosecond, but DEST's own mtime was the time of the undo. Neither run
// made, replaced or removed anything in DEST's top folder but its journal of temp names,
// which each made there with its first temp file and removed as it ended; the before-state
// cannot hold DEST itself, so nothing put its mtime back. DEST's mtime is now set back to
// what it was before the journal was made, when nothing else moved it since.
func TestAttackUndoLeavesDestMtimeMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "archived\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"f": {content: "mine\n"}})
	old := time.Date(2001, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, p := range []string{"app/f", "app", "."} {
		if err := os.Chtimes(filepath.Join(dest, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	if st, err := os.Stat(dest); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("DEST's mtime after the restore, which wrote nothing in its top folder but its journal: %v (%v), want %v", st.ModTime(), err, old)
	}
	u := backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	mustExit(t, u, exitComplete)
	assertContent(t, filepath.Join(dest, "app/f"), "mine\n")
	for _, p := range []string{"app/f", "app", "."} {
		if st, err := os.Stat(filepath.Join(dest, p)); err != nil || !st.ModTime().Equal(old) {
			t.Errorf("%s after the undo: mtime %v (%v), want %v as it was", p, st.ModTime(), err, old)
		}
	}
	// A restore that replaces a name in DEST's top folder moves its mtime, as any write there.
	makeTree(t, filepath.Join(dir, "src/other"), map[string]node{"g": {content: "other\n"}})
	other := filepath.Join(dir, "other.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", other, "src/other/g"), exitComplete)
	writeFile(t, filepath.Join(dest, "g"), "mine\n")
	if err := os.Chtimes(dest, old, old); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--no-undo", other, dest), exitComplete)
	assertContent(t, filepath.Join(dest, "g"), "other\n")
	if st, err := os.Stat(dest); err != nil || st.ModTime().Equal(old) {
		t.Errorf("DEST's mtime after a restore that replaced DEST/g: %v (%v), want it moved", st.ModTime(), err)
	}
}
