package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreThroughSymlinkSaysWayOut: after the snapshot, the upgrade moved app/data
// to another disk and left the symlink app/data -> there. Restoring the snapshot into the
// original place is refused, with or without --force, as documented (a restore never writes
// through a symlink in DEST), but the lines said only "app/data/: is a symlink in the
// destination" and "refused, nothing written: 2 entries unsafe or impossible": the cause,
// not what to do. The folder's line now says the way out, restore into another folder, as
// the refusal of a folder where the archive has a file does; nothing is written.
func TestAttackRestoreThroughSymlinkSaysWayOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"data/f": {content: "d\n"}, "c": {content: "c\n"}})
	arch := filepath.Join(dir, "snap.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	if err := os.Rename(filepath.Join(dir, "app/data"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../moved", filepath.Join(dir, "app/data")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"restore", arch, dir}, {"restore", "--force", "--no-undo", arch, dir}} {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitFailed)
		want := "app/data/: is a symlink in the destination, which a restore never writes through (restore into another folder)\n"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%q: stderr\n%s\nwant the line %q", args, r.stderr, want)
		}
	}
	assertContent(t, filepath.Join(dir, "moved/f"), "d\n")
}
