package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreDestDanglingSymlink restores into a DEST that is a symlink to a folder
// that does not exist. The restore failed (right: its target is not made, which could be
// anywhere), but said "mkdir DEST: file exists", naming a file the user cannot see. Correct:
// exit 1, one line saying DEST is a symlink to what is missing; nothing made.
func TestAttackRestoreDestDanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	if err := os.Symlink("gone/dest", filepath.Join(dir, "dest")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "a.zip", "dest")
	mustExit(t, r, exitFailed)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(r.stderr, "symlink") || !strings.Contains(r.stderr, "gone/dest") {
		t.Errorf("stderr = %q, want one line saying dest is a symlink to gone/dest, which is missing", r.stderr)
	}
	if exists(filepath.Join(dir, "gone")) {
		t.Error("the symlink's target was made")
	}
}

// TestAttackOutputDirDanglingSymlink: create --output-dir DIR, DIR a symlink to a folder
// that does not exist (a set, and the implicit --output-dir of a run in such a folder
// given as -o's folder). It failed, rightly, with "output folder DIR: file exists". Correct:
// exit 1, saying DIR is a symlink to what is missing; the target not made.
func TestAttackOutputDirDanglingSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	if err := os.Symlink("gone/set", filepath.Join(dir, "set")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app")
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "symlink") || !strings.Contains(r.stderr, "gone/set") {
		t.Errorf("stderr = %q, want it to say set is a symlink to gone/set, which is missing", r.stderr)
	}
	if exists(filepath.Join(dir, "gone")) {
		t.Error("the symlink's target was made")
	}
}
