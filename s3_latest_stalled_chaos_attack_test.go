package main

import (
	"encoding/json"
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

// TestAttackChaosS3InterruptedLatestWriteNeverSent: SIGINT reaches create while its write of
// LATEST is stalled on the way (the server never gets it), and the look that follows reads
// LATEST still naming the old archive. The run printed "interrupted; LATEST not moved" and
// exited 130, but its --json said complete and so did the new archive's receipt: status
// then counts a complete backup that LATEST passed over ("activated by hand", when an
// activate ran before it), which docs/sets.md says an interrupt before LATEST moves never
// leaves. Once the look shows LATEST did not move, the receipt says failed, as the exit
// code does.
func TestAttackChaosS3InterruptedLatestWriteNeverSent(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	old := readLatest(t, s.dir)
	var sent atomic.Bool
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		if strings.HasSuffix(r.URL.Path, "/LATEST") && kind == "PUT" {
			sent.Store(true)
			return stall
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "second\n"}})
	cmd := exec.Command(binary, "create", "--json", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the run's write of LATEST", sent.Load)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := readLatest(t, s.dir); got != old {
		t.Fatalf("LATEST names %s, want %s: the write was never passed on", got, old)
	}
	var out format.Receipt
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("--json: %v: %q", err, stdout.String())
	}
	name := filepath.Base(out.Archive.Path)
	rc := readReceipt(t, filepath.Join(s.dir, name+format.ReceiptSuffix))
	code := cmd.ProcessState.ExitCode()
	if code != exitInterrupted || out.Status != format.Failed || rc.Status != format.Failed {
		t.Errorf("exit %d, --json says %s, the receipt of %s says %s; want %d and failed in both (LATEST did not move), stderr:\n%s",
			code, out.Status, name, rc.Status, exitInterrupted, stderr.String())
	}
}
