package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoRemovesFileSavedOverCreatedSymlink: the undo removes a symlink the restore
// undone created once it has read it (readlinkat) and found the recorded target, then
// unlinks the name. Between the two, the user saves a file of his at that name (an
// editor's rename, or `sed -i` on the link, which replaces it with a file): the undo
// removed it, said complete (exit 0), and the file is in no before-state (the undo's own
// saved the symlink). A created file is moved aside and compared before it is removed
// (removeHeld); a symlink is now too: held open (O_PATH), its target read through that
// descriptor, moved aside, and removed only when what the move took is the link read.
func TestAttackUndoRemovesFileSavedOverCreatedSymlink(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a.txt": {content: "archived\n"},
		"l":     {kind: "symlink", content: "a.txt"},
	})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "-o", arch, "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a.txt": {content: "mine\n"}})
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	undo := printedUndo(t, r.stderr)

	// Held as it is about to remove app/l (the unlink, or a move aside), once it has read
	// the link, the user saves his file at app/l.
	app := filepath.Join(dest, "app")
	log := filepath.Join(dir, "strace.log")
	cmd := straceUndo(dir, app, log, "unlinkat,renameat2", undo, "unlinkat,renameat2:delay_enter=1500000:when=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool {
		return (strings.Contains(c, "unlinkat(") || strings.Contains(c, "renameat2(")) && strings.Contains(c, `, "l"`) && !returned(c)
	})
	writeFile(t, filepath.Join(app, ".l.swp"), "the user's work\n")
	if err := os.Rename(filepath.Join(app, ".l.swp"), filepath.Join(app, "l")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	b, err := os.ReadFile(filepath.Join(app, "l"))
	if err != nil || string(b) != "the user's work\n" {
		t.Errorf("app/l, the user's file saved over the symlink the undo was removing: %q, %v; undo exit %d:\n%s",
			b, err, cmd.ProcessState.ExitCode(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "app/l: created by the restore undone, not removed") {
		t.Errorf("the undo did not say it left app/l:\n%s", stderr.String())
	}
}
