package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackRestoredFileInheritsDefaultACL: app/d holds a default ACL (user:bin:rwx), and
// app/d/secret (mode 0640) and the folder app/d/sub were made before it, with no ACL: the
// archive (create --xattrs) records "xattrs": {} for both. A first restore --xattrs sets
// app/d's default ACL last, so what it writes in app/d has none. A re-run that finishes an
// interrupted restore (here: secret and sub removed, then the same restore again, as the
// docs say to finish one) makes them in the app/d that holds the default ACL now: the kernel
// gives each new file and folder an ACL from it, and restore kept it, though it sets the
// ACLs the archive records: secret came back with user:bin:rwx (effective r--, its mask
// the group's bits), bin reading a file the archive says only root and its group may read;
// sub with user:bin:rwx and the default ACL too. Correct: with --xattrs, a file or folder
// the restore makes holds the ACLs its record gives and no other (where the archive's run
// read its attributes), as a file replaced by --force does.
func TestAttackRestoredFileInheritsDefaultACL(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{
		"app/d/secret": {content: "secret\n", mode: 0o640},
		"app/d/sub":    {kind: "dir", mode: 0o750},
	})
	if out, err := exec.Command("setfacl", "-d", "-m", "u:bin:rwx", filepath.Join(src, "app/d")).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	zip := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "--xattrs", "-o", zip, "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--xattrs", zip, dest), exitComplete)
	for _, name := range []string{"app/d/secret", "app/d/sub"} {
		if err := os.Remove(filepath.Join(dest, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--xattrs", zip, dest)
	mustExit(t, r, exitComplete)
	for _, c := range []struct{ name, attr string }{
		{"app/d/secret", "system.posix_acl_access"},
		{"app/d/sub", "system.posix_acl_access"},
		{"app/d/sub", "system.posix_acl_default"},
	} {
		if _, err := unix.Getxattr(filepath.Join(dest, c.name), c.attr, make([]byte, 256)); err == nil {
			out, _ := exec.Command("getfacl", "-c", filepath.Join(dest, c.name)).CombinedOutput()
			t.Errorf("%s: has %s after a re-run of restore --xattrs, the archive records none:\n%s", c.name, c.attr, out)
		}
	}
	fi, err := os.Stat(filepath.Join(dest, "app/d/secret"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("app/d/secret: %v %v, want mode 0640", fi, err)
	}
	// The folder itself keeps the default ACL it was archived with.
	if _, err := unix.Getxattr(filepath.Join(dest, "app/d"), "system.posix_acl_default", make([]byte, 256)); err != nil {
		t.Errorf("app/d: its recorded default ACL not restored: %v", err)
	}
}
