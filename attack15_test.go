package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackMountOverFolderUnnoticed: a restore is held (strace) right after it put the
// first file of app/d1 in place; meanwhile app/d1 is covered by a mount (a bind mount of an
// empty folder outside DEST; a user can do the same with fusermount over a folder of their
// own in DEST, with no privilege). A mount makes no inotify event, so the move guard stays
// quiet and the rest of app/d1's files go into the folder hidden below the mount, and the
// restore reports complete. The old checks (fstatat of d1 in app: the mount's root, another
// identity) refused them: the name app/d1 now holds another folder, which is exactly "a
// folder replaced during the restore receives nothing more" (restore/doc.go). Correct: f2
// and f3 fail "was moved or replaced during the restore", exit 3, and the covered folder
// keeps only f1.
func TestAttackMountOverFolderUnnoticed(t *testing.T) {
	mustRoot(t) // mount
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"d1/f1": {content: "1\n"}, "d1/f2": {content: "2\n"}, "d1/f3": {content: "3\n"}, "z.txt": {content: "z\n"},
	})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, cover := filepath.Join(dir, "dest"), filepath.Join(dir, "outside/cover")
	if err := os.MkdirAll(cover, 0o755); err != nil {
		t.Fatal(err)
	}
	mounted := false
	t.Cleanup(func() {
		if mounted {
			exec.Command("umount", filepath.Join(dest, "app/d1")).Run()
		}
	})
	code, stderr := restoreSwapping(t, dir, arch, dest, func() {
		if out, err := exec.Command("mount", "--bind", cover, filepath.Join(dest, "app/d1")).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		mounted = true
	})
	if out, err := exec.Command("umount", filepath.Join(dest, "app/d1")).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	mounted = false
	if code != exitIncomplete || !strings.Contains(stderr, "app/d1/f2: app/d1 was moved or replaced during the restore") {
		t.Errorf("exit %d, want %d with app/d1/f2 refused\n%s", code, exitIncomplete, stderr)
	}
	if got := listTree(t, filepath.Join(dest, "app/d1")); !slices.Equal(got, []string{"f1"}) {
		t.Errorf("the folder covered by a mount received %q after it was covered, want f1 only", got)
	}
}
