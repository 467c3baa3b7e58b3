package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackUndoLeavesFolderOpenedAsUser: a user restores --force an archive that creates a
// read-only folder app/ro (0555) holding app/ro/f. The user then puts a file of its own in
// app/ro (app/ro/mine: chmod u+w, write, chmod 0555 again). The printed undo removes
// app/ro/f: EACCES in the read-only folder, so it now chmods app/ro 0700 and removes f;
// then app/ro is not empty ("not removed: the folder is not empty", a warning, exit 0) and
// stays, but as drwx------: the undo removed the group's and others' read and search bits
// from a folder it leaves in place (group members can no longer reach app/ro/mine), and its
// own before-state does not record the folder's old mode, so undoing the undo does not
// bring it back either.
// Correct: a folder the undo opens to empty it and then does not remove gets its mode back
// (0555), or the undo opens it only once it knows it will remove it.
func TestAttackUndoLeavesFolderOpenedAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{
		"app/x":    {content: "new x\n"},
		"app/ro":   {kind: "dir", mode: 0o555},
		"app/ro/f": {content: "from the archive\n"},
	})
	zip := readableArchive(t, dir, src)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/x": {content: "old x\n"}})
	for _, p := range []string{dest, filepath.Join(dest, "app"), filepath.Join(dest, "app/x")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--force", zip, dest)
	mustExit(t, r, exitComplete)
	ro := filepath.Join(dest, "app/ro")
	if fi, err := os.Stat(ro); err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("restore: app/ro %v %v, want mode 0555", fi, err)
	}
	// The user adds a file of its own to the read-only folder, and keeps it read-only.
	if err := os.Chmod(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "mine"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(ro, "mine"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	line := strings.Join(printedUndo(t, r.stderr), " ")
	undo := backup(t, runOpts{dir: dir, uid: nobody}, strings.Fields(line)...)
	fi, err := os.Stat(ro)
	if err != nil {
		t.Fatalf("app/ro removed though it holds the user's file: %v; stderr:\n%s", err, undo.stderr)
	}
	if fi.Mode().Perm() != 0o555 {
		t.Errorf("the printed undo (%s) left app/ro (not removed: it holds the user's file) with mode %v; want 0555, the mode it had; exit %d, stderr:\n%s", line, fi.Mode().Perm(), undo.code, undo.stderr)
	}
}
