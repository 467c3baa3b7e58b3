package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAttack9RemetaKeepsWalksLinkGroup: app/a and app/b are hard links of root's program
// (0755). Between the walk's lstat of app/a (nlink 2) and the worker's open, nobody, who owns
// the folder app, moves root's app/a out of the tree (its inode keeps 2 names: app/b and the
// moved one, so the walk's lstat of app/b still says nlink 2) and puts his own copy of the same
// bytes at app/a. The worker sees another inode and, since 1b3c1c6, stores app/a with metadata
// made again from its fstat: owner nobody, nobody's inode. But the entry keeps the hard-link
// group the walk gave it from the listed file's device and inode (archive.Writer.linkGroup on
// the walk's lstat): the manifest records app/a (nobody's inode) and app/b (root's inode) as
// one link group. docs/create.md: "files of one run with the same device and inode are one
// link group". backup restore, as root, links the members of a group whose records give the
// same content to the group's first file: one of app/a and app/b then belongs to the other's
// owner, against the owner its record gives. Here app/b, root's program, comes back owned by
// nobody, who can then rewrite what root runs.
func TestAttack9RemetaKeepsWalksLinkGroup(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	app, stage := filepath.Join(dir, "app"), filepath.Join(dir, "stage")
	const program = "#!/bin/sh\necho root's program\n"
	makeTree(t, dir, map[string]node{"app/a": {content: program}, "stage/n": {content: program}})
	if err := os.Chmod(filepath.Join(app, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(app, "a"), filepath.Join(app, "b")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{app, stage, filepath.Join(stage, "n")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	r := createSwapping(t, dir, "app", "a", func() {
		sh := exec.Command("sh", "-c", `mv "$1/a" "$2/a.old" && mv "$2/n" "$1/a"`, "sh", app, stage)
		sh.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
	})
	archive := filepath.Join(dir, "b.zip")
	if r.code != exitComplete && r.code != exitIncomplete {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	uid := map[string]uint32{}
	link := map[string]int{}
	for _, f := range readManifest(t, archive).Files {
		if f.Meta != nil {
			uid[f.Path], link[f.Path] = f.Meta.UID, f.Link
		}
	}
	if uid["app/a"] != nobody {
		t.Skipf("the swap came too late: app/a recorded as uid %d", uid["app/a"])
	}
	if link["app/a"] != 0 && link["app/a"] == link["app/b"] {
		t.Errorf("manifest: app/a (uid %d, nobody's own inode) and app/b (uid %d) are one link group (%d)",
			uid["app/a"], uid["app/b"], link["app/a"])
	}
	dest := filepath.Join(dir, "dest")
	rr := backup(t, runOpts{}, "restore", "--jobs", "1", archive, dest)
	if rr.code != 0 {
		t.Fatalf("restore: exit %d\n%s", rr.code, rr.stdout+rr.stderr)
	}
	for _, name := range []string{"app/a", "app/b"} {
		info, err := os.Lstat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Sys().(*syscall.Stat_t).Uid; got != uid[name] {
			t.Errorf("restored %s belongs to uid %d; its record says uid %d", name, got, uid[name])
		}
	}
}
