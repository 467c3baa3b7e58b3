package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackExistingFolderACLNotCompared: a folder DEST holds already is given the archive's
// owner, mode and mtime when they differ, but its attributes were never compared, so a folder
// that differs only in them was left as it was, in a restore that says complete:
//   - restore --force --xattrs of an archive recording app/ with no ACL ("xattrs": {}) kept
//     the ACL user:bin:rwx DEST's app/ had (bin may create and remove files in it), where a
//     file kept as present loses such an ACL, and its before-state saves it;
//   - restore --xattrs of an archive recording app/ with that ACL left DEST's app/ without
//     it.
//
// Correct: a folder the archive holds is compared on the attributes restore sets, as a file
// kept as present is, and given them (with --force, the others taken away, saved in the
// before-state); the printed undo gives the folder back its ACL exactly.
func TestAttackExistingFolderACLNotCompared(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	mustTool(t, "getfacl")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "hi\n"}, "app": {kind: "dir", mode: 0o775}})
	app := filepath.Join(src, "app")
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	setfacl := func(path string, args ...string) {
		t.Helper()
		if out, err := exec.Command("setfacl", append(args, path)...).CombinedOutput(); err != nil {
			t.Skipf("setfacl: %v %s", err, out)
		}
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	acl := func(path string) string {
		out, _ := exec.Command("getfacl", "-c", "-p", path).Output()
		return string(out)
	}
	setfacl(app, "-b")
	plain := filepath.Join(dir, "plain.zip")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--xattrs", "-o", plain, "app"), exitComplete)
	setfacl(app, "-m", "u:bin:rwx")
	withACL := filepath.Join(dir, "acl.zip")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--xattrs", "-o", withACL, "app"), exitComplete)

	// The archive records app/ with no ACL; DEST's app/ has one granting bin.
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--xattrs", withACL, dest), exitComplete)
	before := acl(filepath.Join(dest, "app"))
	if !strings.Contains(before, "user:bin:rwx") {
		t.Fatalf("app/ restored without its ACL:\n%s", before)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--xattrs", "--undo-dir", dir, plain, dest)
	mustExit(t, r, exitComplete)
	if got := acl(filepath.Join(dest, "app")); strings.Contains(got, "user:bin") {
		t.Errorf("restore --force --xattrs of app/ recorded with no ACL kept DEST's:\n%s", got)
	}
	if strings.Contains(r.stderr, "before-state saved") {
		mustExit(t, backup(t, runOpts{dir: dir}, printedUndo(t, r.stderr)...), exitComplete)
		if got := acl(filepath.Join(dest, "app")); got != before {
			t.Errorf("app/'s ACL after the undo:\n%s\nbefore the restore:\n%s", got, before)
		}
	} else {
		t.Errorf("no before-state written; stderr:\n%s", r.stderr)
	}

	// The archive records app/ with the ACL; DEST's app/ lacks it.
	setfacl(filepath.Join(dest, "app"), "-b")
	r = backup(t, runOpts{dir: dir}, "restore", "--xattrs", withACL, dest)
	mustExit(t, r, exitComplete)
	if got := acl(filepath.Join(dest, "app")); !strings.Contains(got, "user:bin:rwx") {
		t.Errorf("restore --xattrs left app/ without its recorded ACL:\n%s\nstderr:\n%s", got, r.stderr)
	}
}
