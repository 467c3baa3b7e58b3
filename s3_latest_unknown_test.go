package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	old := readLatest(t, s.dir)
	var putSeen atomic.Bool
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		if !strings.HasSuffix(r.URL.Path, "/LATEST") {
			return pass
		}
		if kind == "PUT" {
			putSeen.Store(true)
			return holdAnswer
		}
		if putSeen.Load() {
			return status500 // every look at LATEST after its write fails
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "second\n"}})
	cmd := exec.Command(binary, "create", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the server to move LATEST", func() bool {
		data, err := os.ReadFile(filepath.Join(s.dir, "LATEST"))
		return err == nil && strings.TrimSpace(string(data)) != old
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	latest := readLatest(t, s.dir)
	rc := readReceipt(t, filepath.Join(s.dir, latest+format.ReceiptSuffix))
	if rc.Status != format.Complete {
		t.Errorf("LATEST names %s, whose receipt now says %s (%q); the run exited %d saying:\n%s", latest, rc.Status, rc.Error, cmd.ProcessState.ExitCode(), stderr.String())
	}
}
