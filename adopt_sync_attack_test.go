package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackAdoptSyncEIOLeavesArchiveAlone: adopt writes the receipt into the set, then
// copies the archive (temp file, sync, hash, link into place) and syncs the set's folder;
// that fsync fails (EIO, the second of the folder's). adopt exited 1 and took the receipt
// back out, but left the archive it had linked: a run without its receipt, which status
// lists as unknown and prune keeps for ever; nothing said so. docs/sets.md: "A copy that
// fails (a full disk) takes its receipt back out: the set is as it was."
// Correct: the set is as it was (the copy goes too), and adopting again works.
func TestAttackAdoptSyncEIOLeavesArchiveAlone(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, _, _ := newestSet(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	ext := filepath.Join(dir, "ext.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ext, "app"), exitComplete)
	before := listDir(t, set)
	r := straceRun(t, dir, set, "fsync", "fsync:error=EIO:when=2", "adopt", set, ext)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "input/output error") {
		t.Fatalf("the test needs the folder's sync to fail; stderr:\n%s", r.stderr)
	}
	if after := listDir(t, set); !slices.Equal(after, before) {
		t.Errorf("adopt failed (exit 1), and the set holds %q, want %q as before; stderr:\n%s", after, before, r.stderr)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "adopt", set, ext), exitComplete)
	if r := backup(t, runOpts{dir: dir}, "status", set); strings.Contains(r.stdout, "unknown") {
		t.Errorf("after adopting again, status lists an unknown run:\n%s", r.stdout)
	}
}
