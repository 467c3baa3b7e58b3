package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mountOrFail runs mount with args and unmounts the last argument, its mount point, when the
// test ends.
func mountOrFail(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Fatalf("mount %q: %v %s", args, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", args[len(args)-1]).Run() })
}

// hiddenMountSetup archives app, makes DEST dest/app holding mine\n, and returns the three
// folders with outside, a folder outside DEST.
func hiddenMountSetup(t *testing.T) (dir, dest, outside string) {
	t.Helper()
	dir = t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "archived\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	dest = filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f.txt": {content: "mine\n", mode: 0o644}, "app/b/.keep": {}})
	outside = filepath.Join(dir, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "a/b"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir, dest, outside
}

// TestAttackUndoDirUnderHiddenBindMount restores with --force and an --undo-dir on a tmpfs
// mounted over outside/a after DEST/app was bind-mounted at outside/a/b: that bind mount is
// hidden, still listed in the mount table, and outside/a/b is now a folder of the tmpfs. The
// check placed a path by the longest mount point listed that holds it, the hidden bind, and
// refused a folder that is not in DEST (exit 2: a regression that stops a cron job's restore).
// Correct: the restore runs, its before-state on the tmpfs.
func TestAttackUndoDirUnderHiddenBindMount(t *testing.T) {
	mustRoot(t) // mount
	dir, dest, outside := hiddenMountSetup(t)
	mountOrFail(t, "--bind", filepath.Join(dest, "app"), filepath.Join(outside, "a/b"))
	mountOrFail(t, "-t", "tmpfs", "tmpfs", filepath.Join(outside, "a"))
	undo := filepath.Join(outside, "a/b")
	if err := os.Mkdir(undo, 0o700); err != nil {
		t.Fatal(err)
	}

	r := backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--undo-dir", undo, "a.zip", dest)
	mustExit(t, r, exitComplete)
	if got := listDir(t, undo); len(got) != 2 {
		t.Errorf("--undo-dir holds %q, want the before-state and its receipt", got)
	}
}

// TestAttackUndoDirOverHiddenMount restores with --force and an --undo-dir, outside/a/b,
// reached through a bind mount of DEST/app made over outside/a after a tmpfs was mounted at
// outside/a/b: that tmpfs is hidden, and outside/a/b is DEST/app/b. The check placed the
// path on the hidden tmpfs, the longest mount point listed, and let the before-state be
// written inside DEST. Correct: a usage error (exit 2), nothing written into DEST.
func TestAttackUndoDirOverHiddenMount(t *testing.T) {
	mustRoot(t) // mount
	dir, dest, outside := hiddenMountSetup(t)
	mountOrFail(t, "-t", "tmpfs", "tmpfs", filepath.Join(outside, "a/b"))
	mountOrFail(t, "--bind", filepath.Join(dest, "app"), filepath.Join(outside, "a"))

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", filepath.Join(outside, "a/b"), "a.zip", dest)
	if r.code != exitUsage || !strings.Contains(r.stderr, "inside DEST") {
		t.Errorf("exit %d, want %d with --undo-dir said inside DEST; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/f.txt"), "mine\n")
	if got := listDir(t, filepath.Join(dest, "app/b")); len(got) != 1 {
		t.Errorf("DEST/app/b holds %q, want .keep alone (no before-state inside DEST)", got)
	}
}
