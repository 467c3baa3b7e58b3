package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackPresentPrivilegedXattrGivenInPlace: as root, restore --same-permissions --xattrs
// of app/tool, recorded as nobody's (0755, no setuid) with a trusted.* and a security.*
// attribute (a Smack exec label: the label the program runs with, as a setuid bit gives a
// user), into a DEST where app/tool holds the same bytes, nobody's, 0755, without them. The
// file is kept as already present and the attributes set in place, on a file nobody may
// rewrite between the check of its bytes and the setxattr: only a file capability counted as
// a grant, though the docs put security.* and trusted.* under the setuid rule. Correct: any
// security.* or trusted.* attribute the restore would set is a grant, as a capability is: a
// plain restore keeps the file as it is with the warning "another user than root may write
// to it", and --force replaces it with a file of its own that holds them.
func TestAttackPresentPrivilegedXattrGivenInPlace(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: "#!/bin/sh\n", mode: 0o755}})
	src := filepath.Join(dir, "src/app/tool")
	for _, a := range []string{"trusted.grant", "security.SMACK64EXEC"} {
		if err := unix.Setxattr(src, a, []byte("x"), 0); err != nil {
			t.Skipf("cannot set %s here: %v", a, err)
		}
	}
	if err := os.Chown(src, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--xattrs", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	tool := filepath.Join(dest, "app/tool")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"tool": {content: "#!/bin/sh\n", mode: 0o755}})
	if err := os.Chown(tool, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	has := func(attr string) bool {
		_, err := unix.Getxattr(tool, attr, make([]byte, 64))
		return err == nil
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--same-permissions", "--xattrs", arch, dest)
	if want := "warning: app/tool: another user than root may write to it"; r.code != exitComplete || !strings.Contains(r.stderr, want) {
		t.Errorf("restore: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	for _, a := range []string{"trusted.grant", "security.SMACK64EXEC"} {
		if has(a) {
			t.Errorf("%s given in place to nobody's app/tool", a)
		}
	}
	var before syscall.Stat_t
	if err := syscall.Stat(tool, &before); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--same-permissions", "--xattrs", "--undo-dir", dir, arch, dest), exitComplete)
	var after syscall.Stat_t
	if err := syscall.Stat(tool, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino == before.Ino || !has("trusted.grant") || !has("security.SMACK64EXEC") || after.Uid != nobody {
		t.Errorf("restore --force: app/tool inode %d (was %d), uid %d, attributes %v %v; want a file of its own, nobody's, with both",
			after.Ino, before.Ino, after.Uid, has("trusted.grant"), has("security.SMACK64EXEC"))
	}
}
