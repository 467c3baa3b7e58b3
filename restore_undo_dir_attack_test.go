package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackUndoDirNotAFolder restores with --force and an --undo-dir that is not a usable
// folder: missing, a regular file, a FIFO, a dangling symlink. Each failed only when the
// before-state was written (exit 1, nothing restored), where prune --attic with the same
// problems is a usage error before anything happens. Correct: --undo-dir is checked up
// front as --attic is (it must be an existing folder): exit 2, a line naming the path and
// the cause (and the usage hint), DEST untouched and nothing made at the path.
func TestAttackUndoDirNotAFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "archived\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{"app/f.txt": {content: "mine\n"}})
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for name, cause := range map[string]string{"missing": "no such file", "file": "not a folder", "fifo": "not a folder", "dangling": "a symlink to nowhere, which does not exist"} {
		undo := filepath.Join(dir, name)
		r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, "a.zip", dest)
		if r.code != exitUsage {
			t.Errorf("%s: exit %d, want %d; stderr: %s", name, r.code, exitUsage, r.stderr)
		}
		first, _, _ := strings.Cut(r.stderr, "\n") // then the usage hint, as for any usage error
		if !strings.Contains(first, "--undo-dir "+undo+": ") || !strings.Contains(first, cause) {
			t.Errorf("%s: stderr = %q, want a first line naming --undo-dir %s and %q", name, r.stderr, undo, cause)
		}
	}
	assertContent(t, filepath.Join(dest, "app/f.txt"), "mine\n")
	if _, err := os.Lstat(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("the missing --undo-dir was made")
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("the dangling symlink's target was made")
	}
}
