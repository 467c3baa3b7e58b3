package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackAdoptSyncEIOLeavesArchiveAlone: adopt writes the receipt into the set, then
// copies the archive (temp file, sync, hash, link into place) and syncs the set's folder;
// that fsync fails (EIO; each of the folder's fsyncs in turn, from a fresh copy of the set).
// adopt exited 1 and took the receipt back out, but left the archive it had linked: a run
// without its receipt, which status lists as unknown and prune keeps for ever; nothing said
// so. docs/sets.md: "A copy that fails (a full disk) takes its receipt back out: the set is
// as it was."
// Correct: whichever sync fails, no archive is left without its receipt.
func TestAttackAdoptSyncEIOLeavesArchiveAlone(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, _, _ := newestSet(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	ext := filepath.Join(dir, "ext.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", ext, "app"), exitComplete)
	for k := 1; k <= 4; k++ {
		try := filepath.Join(dir, fmt.Sprintf("set%d", k))
		copyTree(t, set, try)
		r := straceRun(t, dir, try, "fsync", fmt.Sprintf("fsync:error=EIO:when=%d", k), "adopt", try, ext)
		if r.code == exitComplete {
			continue
		}
		zips, _ := filepath.Glob(filepath.Join(try, "*.zip"))
		for _, z := range zips {
			if _, err := os.Stat(z + ".receipt.json"); err != nil {
				t.Errorf("fsync %d of the set failed: adopt exit %d, and %s is left without its receipt; stderr:\n%s", k, r.code, filepath.Base(z), r.stderr)
			}
		}
		mustExit(t, backup(t, runOpts{dir: dir}, "adopt", try, ext), exitComplete)
		if r := backup(t, runOpts{dir: dir}, "status", try); strings.Contains(r.stdout, "unknown") {
			t.Errorf("fsync %d of the set failed; after adopting again, status lists an unknown run:\n%s", k, r.stdout)
		}
	}
}
