package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreQuietStillWarns: -q prints nothing when everything was restored, but a warning
// says something the user must know though every entry is in place (here: a file of two
// names replaced at one name only, its other name keeping the old file). Once, -q printed
// nothing for a complete restore with warnings, so that cron mailed nothing.
func TestRestoreQuietStillWarns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"sub/b.txt": {content: "mine\n"}})
	if err := os.Link(filepath.Join(dest, "app/sub/b.txt"), filepath.Join(dest, "app/sub/c")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "warning: app/sub/b.txt: a hard link (2 names): replaced at this name only") {
		t.Errorf("restore -q with a warning printed %q, want the warning", r.stderr)
	}
}
