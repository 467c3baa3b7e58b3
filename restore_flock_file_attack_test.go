package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreTreeHoldingFlockFile: a home whose cron line runs `flock -n
// ~/.backup.lock rsync …` holds an empty .backup.lock at its top, which makes it look like a
// backup set's folder. After the snapshot, a file deep in the tree (alice/proj/src/main.go)
// was edited; restore --force of the snapshot into the original place was refused, exit 1,
// "alice, a folder in DEST, is a backup set (it holds .backup.lock): a restore never writes
// into one", for a file three folders below it: every forced restore of that home was. A
// set's own files (LATEST, its runs and receipts) sit in its folder itself; what the rule
// guards is a write there. A restore that writes only into folders below it completes; one
// that would replace a file of the folder itself is still refused.
func TestAttackRestoreTreeHoldingFlockFile(t *testing.T) {
	t.Parallel()
	dir, undo := t.TempDir(), t.TempDir()
	home := filepath.Join(dir, "alice")
	makeTree(t, home, map[string]node{
		".backup.lock":     {content: ""},
		".bashrc":          {content: "export A=1\n"},
		"proj/src/main.go": {content: "package main\n"},
	})
	arch := filepath.Join(undo, "home.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "alice"), exitComplete)

	if err := os.WriteFile(filepath.Join(home, "proj/src/main.go"), []byte("package broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, arch, dir)
	mustExit(t, r, exitComplete)
	assertContent(t, filepath.Join(home, "proj/src/main.go"), "package main\n")

	// A file of the folder itself: the rule holds.
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export A=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", undo, arch, dir)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "is a backup set (it holds .backup.lock)") {
		t.Errorf("restore --force of a file beside .backup.lock: stderr %q, want the set's refusal", r.stderr)
	}
	assertContent(t, filepath.Join(home, ".bashrc"), "export A=2\n")
}

// TestAttackRestoreForeignZipMakesFolderInSet: a zip of another tool lists app/new/x alone,
// no entry for the folder app/new; DEST/app is a backup set. The restore would make app/new
// in the set's folder: that is a write into it, refused as one of a file there is.
func TestAttackRestoreForeignZipMakesFolderInSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "f\n"}})
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dest, "app"), "src/app"), exitComplete)
	foreign := filepath.Join(dir, "foreign.zip")
	writeForeignZip(t, foreign, map[string]string{"app/new/x": "x\n"})
	r := backup(t, runOpts{dir: dir}, "restore", foreign, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "is a backup set") {
		t.Errorf("stderr %q, want the set's refusal", r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dest, "app/new")); err == nil {
		t.Errorf("the restore made app/new in the set's folder")
	}
}
