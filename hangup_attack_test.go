package main

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestAttackHangupLeavesTemp closes the terminal of a run, as a dropped ssh session does:
// SIGHUP. Its default action killed the run where it stood, as SIGKILL does: the temp
// archive left beside the final path (a database's staged copy too, plaintext for an
// encrypted run, in $TMPDIR), no receipt. Correct: SIGHUP stops a run as SIGINT and SIGTERM
// do (exit 130, a failed receipt, nothing left), and a run started under nohup, which
// asked for SIGHUP to be ignored, is not stopped by it and completes.
func TestAttackHangupLeavesTemp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		wrapper []string
		code    int
		status  string
	}{
		{"terminal", nil, exitInterrupted, "failed"},
		{"nohup", []string{"nohup"}, exitComplete, "complete"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := startSlowRunUnder(t, dir, tt.wrapper...)
			if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			out := filepath.Join(dir, "out")
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Fatalf("exit %d (%v), want %d", code, cmd.ProcessState, tt.code)
			}
			if extra := leftovers(t, out, "app.zip", "app.zip.receipt.json"); len(extra) > 0 {
				t.Errorf("left behind: %v", extra)
			}
			if tt.code != exitComplete && exists(filepath.Join(out, "app.zip")) {
				t.Error("an interrupted run left an archive at the final path")
			}
			if rc := readReceipt(t, filepath.Join(out, "app.zip.receipt.json")); string(rc.Status) != tt.status {
				t.Errorf("receipt status %q, want %s", rc.Status, tt.status)
			}
		})
	}
}
