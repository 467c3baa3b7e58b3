package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackACLSetsModeNoChmodAfterAsUser: a user (not root) restores with --xattrs a file
// archived with mode 0240 and an ACL (user::-w-, user:bin:r--, group::---, mask::r--,
// other::---). The restore gives it 0640 (a user's restore keeps the owner's read bit,
// docs/restore.md), and makes it (O_TMPFILE) with that mode, so fdMeta's made already has
// 0640 and the owner's write bit: no early chmod, the ACL is set last and sets the mode
// from itself (user::-w-, so 0240), and the final fchmod(perm) is skipped because made had
// the mode already. The file ends 0240: its owner cannot read what it restored (a re-run
// into DEST cannot check it, --force cannot write its before-state), although the docs say
// the mode is set after the attributes, ACLs last "since an ACL sets the mode too".
// Correct: app/f ends 0640 (the final chmod done whenever an ACL was set, or made's mode
// not trusted once any attribute was set), and a re-run of the same restore finds it there
// (now it cannot read it and refuses: "app/f: exists in the destination", exit 1).
func TestAttackACLSetsModeNoChmodAfterAsUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	dir := sharedTempDir(t)
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "secret\n", mode: 0o200}})
	path := filepath.Join(src, "app/f")
	if out, err := exec.Command("setfacl", "-m", "u:bin:r", path).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	if buf := make([]byte, 256); func() error { _, err := unix.Getxattr(path, "system.posix_acl_access", buf); return err }() != nil {
		t.Skip("no ACL recorded here")
	}
	zip := readableArchive(t, dir, src, "--xattrs")
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--xattrs", zip, dest)
	fi, err := os.Stat(filepath.Join(dest, "app/f"))
	if err != nil {
		t.Fatalf("app/f not restored: %v; exit %d, stderr:\n%s", err, r.code, r.stderr)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("restore --xattrs as a user of a 0240 file with an ACL: app/f is %v, want 0640 (the mode set after the ACL); exit %d, stderr:\n%s", fi.Mode().Perm(), r.code, r.stderr)
	}
	// What the owner's read bit is kept for: a re-run into the same DEST finds the file there.
	if again := backup(t, runOpts{dir: dir, uid: nobody}, "restore", "--xattrs", zip, dest); again.code != exitComplete {
		t.Errorf("re-run of the same restore as the user: exit %d, want 0 (app/f already there); stderr:\n%s", again.code, again.stderr)
	}
}
