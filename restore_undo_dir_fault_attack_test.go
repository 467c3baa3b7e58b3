package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAttackPrintedUndoLosesUndoDir: DEST is a mount whose parent is read-only, so restore
// --force needs --undo-dir, and with it saves its before-state and replaces app/f. The undo
// it printed, "backup restore --force --same-permissions --xattrs BEFORE-STATE DEST", left
// --undo-dir out: the undo, itself a restore --force, went to write its own before-state in
// DEST's read-only parent and failed ("before-state: creating archive …: read-only file
// system; nothing restored"), exit 1: the printed way back did not undo the restore.
// Correct: the printed undo carries --undo-dir DIR, the folder that took the restore's
// before-state, and undoes the restore as printed.
func TestAttackPrintedUndoLosesUndoDir(t *testing.T) {
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	parent, undoDir := filepath.Join(dir, "ro"), filepath.Join(dir, "undo")
	os.Mkdir(parent, 0o755)
	os.Mkdir(undoDir, 0o755)
	mountTmpfs(t, parent, "1m")
	dest := filepath.Join(parent, "dest")
	os.Mkdir(dest, 0o755)
	mountTmpfs(t, dest, "1m")
	makeTree(t, dest, map[string]node{"app/f": {content: "mine\n"}})
	if err := syscall.Mount("tmpfs", parent, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undoDir, arch, dest)
	mustExit(t, r, exitComplete)
	r = backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...)
	if r.code != exitComplete {
		t.Errorf("the printed undo: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/f"), "mine\n")
}
