package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackChaosReaderTargetPrunedAfterResolve: verify, list and restore of a set read
// LATEST, check its target and its receipt, and only then open the archive by its name. A
// create --keep-last 1 that runs between the two (strace holds the reader's first open of
// the archive) moves LATEST on and prunes the old target, as the docs allow: the reader
// said "no such file or directory" and exited 1 about a healthy set, whose LATEST it must
// read again, as it does when the target goes missing before its check.
func TestAttackChaosReaderTargetPrunedAfterResolve(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"verify", "list", "restore"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			dir, set, _, b := newestSet(t)
			args := []string{cmd, set}
			if cmd == "restore" {
				args = append(args, filepath.Join(dir, "dest"))
			}
			held, stderr := heldOpen(t, dir, filepath.Join(set, b), args...)
			waitFor(t, "the reader held at its open of "+b, inSyscall(held, unix.SYS_OPENAT))
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
			if _, err := os.Stat(filepath.Join(set, b)); err == nil {
				t.Fatalf("%s was not pruned: the race did not happen", b)
			}
			held.Wait()
			if code := held.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("%s of the set whose LATEST moved on: exit %d, stderr %q; want %d, the new target read", cmd, code, stderr, exitComplete)
			}
			if cmd == "restore" {
				if _, err := os.Stat(filepath.Join(dir, "dest", "app", "c")); err != nil {
					t.Errorf("the restore did not restore LATEST's new target: %v", err)
				}
			}
		})
	}
}

// heldOpen runs the binary under strace, which holds its first open of path for five
// seconds before making it: long enough for another run to change the set meanwhile.
func heldOpen(t *testing.T, dir, path string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	sargs := []string{"-f", "-qq", "-o", os.DevNull, "-P", path, "-e", "trace=openat",
		"-e", "inject=openat:delay_enter=5000000:when=1", binary}
	return startIn(t, dir, "strace", append(sargs, args...)...)
}
