package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackActivateArchivePathThroughSymlink gives activate its ARCHIVE as a path to the
// archive in DIR that reaches DIR through a symlink (DIR lnk and ARCHIVE set/NAME, or DIR
// set and ARCHIVE lnk/NAME, lnk a symlink to set). The docs take "a path to it in DIR";
// activate compared the two folders' names only and refused both, exit 2, "give the
// archive's name in the set, not a path elsewhere". Correct: the folder is DIR (the same
// folder, by device and inode), and the dry run says what it would do, exit 0. A file in
// another folder stays refused.
func TestAttackActivateArchivePathThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	run := readLatest(t, filepath.Join(dir, "set"))
	if err := os.Symlink("set", filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"lnk", "set/" + run}, {"set", "lnk/" + run}} {
		if r := backup(t, runOpts{dir: dir}, append([]string{"activate", "-n"}, args...)...); r.code != exitComplete {
			t.Errorf("activate -n %q: exit %d, stderr %q; want 0", args, r.code, r.stderr)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := backup(t, runOpts{dir: dir}, "activate", "-n", "set", "other/"+run); r.code != exitUsage {
		t.Errorf("activate -n set other/%s: exit %d, stderr %q; want 2", run, r.code, r.stderr)
	}
}
