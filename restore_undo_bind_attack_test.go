package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackUndoDirBindMountInsideDest restores with --force and an --undo-dir that is a
// bind mount of a folder inside DEST (DEST/app mounted at outside/undo, as a container's
// volume is). The check of --undo-dir walked up from the folder, which passes no folder of
// DEST: the before-state was written into DEST/app, "never inside DEST" broken, and the
// undo put its own there too. Correct: a usage error (exit 2) naming --undo-dir as inside
// DEST, DEST untouched and no before-state written.
func TestAttackUndoDirBindMountInsideDest(t *testing.T) {
	mustRoot(t) // mount
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "archived\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f.txt": {content: "mine\n"}})
	undo := filepath.Join(dir, "outside/undo")
	if err := os.MkdirAll(undo, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", filepath.Join(dest, "app"), undo).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", undo).Run() })

	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, "a.zip", dest)
	if r.code != exitUsage || !strings.Contains(r.stderr, "inside DEST") {
		t.Errorf("exit %d, want %d with --undo-dir said inside DEST; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/f.txt"), "mine\n")
	if got := listTree(t, filepath.Join(dest, "app")); len(got) != 1 {
		t.Errorf("DEST/app holds %q, want f.txt alone (no before-state inside DEST)", got)
	}
}

// TestAttackAtticBindMountInsideSet prunes into an --attic that is a bind mount of a folder
// inside the set (SET/old mounted at outside/attic). prune refuses SET/old itself ("inside
// the backup set"), but through the mount the check passed, and the backups pruned would be
// moved into a folder of the set. Correct: the same usage error (exit 2), nothing moved.
func TestAttackAtticBindMountInsideSet(t *testing.T) {
	dir, set, attic := setWithTwoRuns(t)
	if out, err := exec.Command("mount", "--bind", filepath.Join(set, "old"), attic).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", attic).Run() })

	r := backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", attic, set)
	if r.code != exitUsage || !strings.Contains(r.stderr, "inside the backup set") {
		t.Errorf("exit %d, want %d with --attic said inside the set; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	if got := listDir(t, attic); len(got) > 0 {
		t.Errorf("the attic, a folder of the set, holds %q", got)
	}
}

// TestAttackAtticMountedByExecBefore: prune checked --attic only before its --exec-before
// hooks, which may mount what it names (docs/operations.md: a hook may mount the backup
// disk). A hook that bind-mounts a folder of the set over the attic had the pruned runs
// moved into the set's own folder, exit 0. Correct: --attic is checked again once the
// hooks ran; the prune fails (exit 1) with nothing moved.
func TestAttackAtticMountedByExecBefore(t *testing.T) {
	dir, set, attic := setWithTwoRuns(t)
	t.Cleanup(func() { exec.Command("umount", "-l", attic).Run() })
	before := setArchives(t, set)

	r := backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", attic,
		"--exec-before", "mount --bind set/old outside/attic", set)
	if r.code != exitFailed || !strings.Contains(r.stderr, "inside the backup set") {
		t.Errorf("exit %d, want %d with --attic said inside the set; stderr:\n%s", r.code, exitFailed, r.stderr)
	}
	if got := listDir(t, attic); len(got) > 0 {
		t.Errorf("the attic, a folder of the set, holds %q", got)
	}
	if got := setArchives(t, set); !slices.Equal(got, before) {
		t.Errorf("the set holds %q after the prune; want %q, nothing moved", got, before)
	}
}

// setWithTwoRuns makes, in dir, a set of two runs of app holding an empty folder old, and an
// empty folder outside/attic, the attic a test mounts set/old on.
func setWithTwoRuns(t *testing.T) (dir, set, attic string) {
	t.Helper()
	mustRoot(t) // mount
	dir = t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "archived\n"}})
	set = filepath.Join(dir, "set")
	for range 2 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	}
	attic = filepath.Join(dir, "outside/attic")
	for _, d := range []string{filepath.Join(set, "old"), attic} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir, set, attic
}
