package main

import (
	"path/filepath"
	"testing"

	"backup/format"
)

// TestAttackS3InterruptedLatestUnknownMarksLatestFailed: the server moves LATEST to the new
// archive, but its answer does not come back before SIGINT cancels the request, and the
// look that follows (movedAnyway's read of LATEST) fails too (a server answering 500 for a
// moment). The run cannot tell whether LATEST moved, and now treats that as "not moved":
// it rewrites the new archive's receipt as failed ("interrupted before LATEST moved to
// archive …"), prints "interrupted; LATEST not moved", exits 130 — while the bucket's LATEST
// names that very archive. The set's LATEST then points at a backup whose receipt says
// failed (docs/sets.md: "LATEST moves only to a good backup"; status and prune read that
// receipt). Before the change the receipt stayed complete: only the message was wrong.
// Correct: the receipt is marked failed only when the run knows LATEST did not move; when it
// cannot tell, the receipt (read back, complete) stands and the run says LATEST may have
// moved; in no case does LATEST name an archive whose receipt says failed.
func TestAttackS3InterruptedLatestUnknownMarksLatestFailed(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	cmd, stderr := interruptedAtLatestWrite(t, s, t.TempDir(), status500) // every look at LATEST after its write fails
	latest := readLatest(t, s.dir)
	rc := readReceipt(t, filepath.Join(s.dir, latest+format.ReceiptSuffix))
	if rc.Status != format.Complete {
		t.Errorf("LATEST names %s, whose receipt now says %s (%q); the run exited %d saying:\n%s", latest, rc.Status, rc.Error, cmd.ProcessState.ExitCode(), stderr.String())
	}
}
