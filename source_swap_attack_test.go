package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestAttackSourceSwappedAfterCheckSaysComplete: the run checks each SOURCE by its path
// (a directory or a regular file), then the walk resolves it again and stats it. A SOURCE
// swapped in between for a FIFO, or for a symlink, was met by the walk as an entry like
// any other: skipped, kind fifo or symlink, and the run said complete, 0 files, exit 0,
// having stored nothing of what the user named.
// Correct: the walk finds the SOURCE not a directory or a regular file, as the check would
// have: the run fails (exit 1, a failed receipt, no archive).
func TestAttackSourceSwappedAfterCheckSaysComplete(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	for name, swapIn := range map[string]func(path, old string) error{
		"fifo":    func(path, _ string) error { return unix.Mkfifo(path, 0o600) },
		"symlink": func(path, old string) error { return os.Symlink(old, path) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			parent := filepath.Join(dir, "srv")
			src := filepath.Join(parent, "app")
			makeTree(t, src, map[string]node{"data": {content: "what the user named\n"}})
			out := filepath.Join(dir, "out.zip")

			// The walk opens the SOURCE's folder (O_PATH) after the check and before it
			// stats the SOURCE in it: the run is held there.
			cmd, stderr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-P", parent, "-e", "trace=openat",
				"-e", "inject=openat:delay_exit=3000000:when=1", binary, "create", "-o", out, src)
			waitFor(t, "the run held at the open of the SOURCE's folder", inSyscall(cmd, unix.SYS_OPENAT))
			old := filepath.Join(parent, "app.old")
			if err := os.Rename(src, old); err != nil {
				t.Fatal(err)
			}
			if err := swapIn(src, old); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			if code := cmd.ProcessState.ExitCode(); code != exitFailed {
				t.Fatalf("exit %d, want %d (the SOURCE is a %s now); stderr:\n%s", code, exitFailed, name, stderr)
			}
			if !strings.Contains(stderr.String(), "not a directory or a regular file") {
				t.Errorf("stderr does not say what the SOURCE is now:\n%s", stderr)
			}
			if rc := readReceipt(t, out+".receipt.json"); rc.Status != format.Failed {
				t.Errorf("receipt status %s, want failed", rc.Status)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("an archive is in place after a failed run")
			}
		})
	}
}
