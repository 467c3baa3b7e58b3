package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackBeforeStateFolderACLBlamesGroup: --undo-dir a folder of root's, 0755, whose ACL
// lets nobody write into it (setfacl -m u:nobody:rwx): the refusal was right (exit 2), but
// it said "group 0 may write into DIR": the mode's group bits are the ACL's mask there, and
// root's group may not write; the user looking for a member of group 0 found none. The
// refusal now names the ACL when the folder has one.
func TestAttackBeforeStateFolderACLBlamesGroup(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/a.txt": {content: "mine\n"}})
	undo := filepath.Join(dir, "undo")
	if err := os.Mkdir(undo, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setfacl", "-m", "u:nobody:rwx", undo).CombinedOutput(); err != nil {
		t.Fatalf("setfacl: %v: %s", err, out)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, arch, dest)
	if r.code != exitUsage || !strings.Contains(r.stderr, "the ACL of "+undo) || strings.Contains(r.stderr, "group 0 may write") {
		t.Errorf("restore --force --undo-dir %s (nobody may write by its ACL): exit %d, want %d and the ACL named:\n%s", undo, r.code, exitUsage, r.stderr)
	}
}
