package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackStatAheadHoldsFoldersUnderSmallLimit: in a folder of 16 names or more, a second
// goroutine stats names from the end, and it held the folder's descriptor from its start to
// its end. A walk that nothing makes wait (symlinks skipped, a dry run: no worker to hand a
// file to) took every name of such a folder before that goroutine ever ran, and went on to
// the next folder with the last one still open: with one thread of Go code, every such
// folder of the tree stayed open until the walk ended. Under ulimit -n 20, 200 folders of
// 16 names lost some 160 of them ("readdir: too many open files", exit 3), where the walk
// before stat-ahead needed 10 descriptors. With --progress, the counting walk beside the
// run's took the rest, and the Go runtime itself died ("netpollinit failed", exit 2).
// Correct: a folder is open only while the walk is in it, as before.
func TestAttackStatAheadHoldsFoldersUnderSmallLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for d := range 200 {
		folder := filepath.Join(dir, "links", fmt.Sprintf("d%03d", d))
		files := filepath.Join(dir, "files", fmt.Sprintf("d%03d", d))
		for _, f := range []string{folder, files} {
			if err := os.MkdirAll(f, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 16 {
			if err := os.Symlink("target", filepath.Join(folder, fmt.Sprintf("l%02d", i))); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("f%02d", i)), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, args := range [][]string{
		{"create", "-o", "links.zip", "links"},                     // symlinks skipped
		{"create", "--dry-run", "-o", "files.zip", "files"},        // nothing handed to workers
		{"create", "--exclude", "f*", "-o", "ex.zip", "files"},     // every file excluded
		{"create", "--progress", "always", "-o", "p.zip", "links"}, // and the counting walk beside it
	} {
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -n 20 && exec "$@"`, "sh", binary}, args...)...)
		// One thread of Go code: the goroutine runs only when the walk waits.
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOMAXPROCS=1")
		r := runCmd(t, cmd)
		if r.code != exitComplete || strings.Contains(r.stderr, "too many open files") {
			t.Errorf("backup %s under ulimit -n 20: exit %d, want %d:\n%s", strings.Join(args, " "), r.code, exitComplete, lastLines(r.stderr, 4))
		}
	}
}
