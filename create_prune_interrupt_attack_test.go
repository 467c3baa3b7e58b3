package main

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackCreatePruneInterruptedSaysContextCanceled: create --keep-last 1 into a set of
// two runs: its backup is complete and LATEST moved, and SIGINT comes while its prune
// deletes the oldest run (held at that unlink). The prune stopped before the next run, exit
// 130, as docs/sets.md says, but its last line was Go's words: "backup: prune: stopped
// before app-….zip: context canceled".
// Correct: it says it was interrupted, as backup prune does.
func TestAttackCreatePruneInterruptedSaysContextCanceled(t *testing.T) {
	t.Parallel()
	dir, set, a, _ := newestSet(t)
	cmd, stderr := heldRun(t, dir, "unlinkat", filepath.Join(set, a), "create", "--output-dir", set, "--keep-last", "1", "app")
	code := interruptWhen(t, cmd, "the prune's unlink held", inSyscall(cmd, unix.SYS_UNLINKAT))
	if code != exitInterrupted || strings.Contains(stderr.String(), "context canceled") || !strings.Contains(stderr.String(), "backup: prune: interrupted") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}
