package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// heldAtReceiptCall starts create in set under strace, which acts on the when-th call of
// syscallName on the new archive's receipt (its name predicted from the second the run
// starts in): inject is strace's action, e.g. "delay_enter=2000000" or "error=EIO". The
// first renameat2 of the receipt is place's (the failed "not verified" receipt); the second
// is the replace, after the read-back passed. strace counts when= per thread.
func heldAtReceiptCall(t *testing.T, dir, set, syscallName, inject, when string, args ...string) (*exec.Cmd, *strings.Builder, *strings.Builder, []string) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	s := startAtSecond()
	names := []string{backupsetName(s), backupsetName(s.Add(time.Second)), backupsetName(s.Add(2 * time.Second))}
	sargs := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=" + syscallName,
		"-e", "inject=" + syscallName + ":" + inject + ":when=" + when}
	for _, n := range names {
		sargs = append(sargs, "-P", filepath.Join(set, n+format.ReceiptSuffix))
	}
	cmd := exec.Command("strace", append(append(sargs, binary), args...)...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd, &stdout, &stderr, names
}

// statusMetric is the status backup_last_status says (the label whose value is 1).
func statusMetric(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "backup_last_status{") && strings.HasSuffix(strings.TrimSpace(line), "} 1") {
			_, after, _ := strings.Cut(line, `status="`)
			status, _, _ := strings.Cut(after, `"`)
			return status
		}
	}
	t.Fatalf("%s has no backup_last_status at 1:\n%s", path, data)
	return ""
}

// TestAttackSetInterruptAfterReadBackDisagrees: SIGTERM comes after the new archive read
// back and while its receipt replaces the "not verified" one (7c6fac5 widened this window
// by a write, two fsyncs and a rename). The replace goes on (a folder's write ignores the
// context), then LATEST's move stops for the interrupt. The run then says four different
// things: the receipt beside the archive and --json say "complete"; stderr prints a
// complete summary and then "interrupted while verifying; LATEST not moved" (the read-back
// was done and passed); the exit code is 130; the metrics file says the last run failed.
// A monitor reading the metrics and a hook reading the receipt disagree about the same run.
// Correct: they agree. Either an interrupt that comes once the archive has read back and
// its receipt says complete stops nothing (LATEST moves, exit 0, as after LATEST moved),
// or the run stops before replacing the receipt, which then says it was not verified, as
// the metrics, --json and the exit code do.
func TestAttackSetInterruptAfterReadBackDisagrees(t *testing.T) {
	t.Parallel()
	dir, set, _, b := newestSet(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	prom := filepath.Join(dir, "backup.prom")
	// Every rename of the receipt is held (strace counts when= per thread, and the two
	// renames may come from different threads): the first is place's; once the receipt is
	// there, the held rename is the replace, after the read-back.
	cmd, stdout, stderr, names := heldAtReceiptCall(t, dir, set, "renameat2", "delay_enter=1500000", "1+",
		"create", "--output-dir", set, "--json", "--metrics-file", prom, "app")
	waitFor(t, "the not-verified receipt in place", func() bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(set, n+format.ReceiptSuffix)); err == nil {
				return true
			}
		}
		return false
	})
	waitFor(t, "the receipt's replace held", inSyscall(cmd, unix.SYS_RENAMEAT2))
	code, name := terminateRun(t, cmd, set, names, stderr)
	onDisk := readReceipt(t, filepath.Join(set, name+format.ReceiptSuffix)).Status
	var printed format.Receipt
	if err := json.Unmarshal([]byte(stdout.String()), &printed); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	metric := statusMetric(t, prom)
	moved := readLatest(t, set) == name
	t.Logf("exit %d, receipt %s, --json %s, metrics %s, LATEST moved %v (was %s); stderr:\n%s", code, onDisk, printed.Status, metric, moved, b, stderr.String())
	if string(onDisk) != metric || printed.Status != onDisk {
		t.Errorf("the run's outcome disagrees with itself: receipt %q, --json %q, metrics %q, exit %d", onDisk, printed.Status, metric, code)
	}
	if onDisk == format.Complete && (!moved || code != exitComplete) {
		t.Errorf("the receipt says complete (read back), but LATEST moved %v and the run exited %d", moved, code)
	}
	if onDisk == format.Complete && strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr says the run was interrupted, but the receipt says complete")
	}
}

// terminateRun sends SIGTERM to the create strace holds, waits for it, and returns its exit
// code and which of names, the new archive's possible names, it put in set.
func terminateRun(t *testing.T, cmd *exec.Cmd, set string, names []string, stderr fmt.Stringer) (code int, name string) {
	t.Helper()
	if err := syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	code = cmd.ProcessState.ExitCode()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(set, n)); err == nil {
			name = n
		}
	}
	if name == "" {
		t.Fatalf("no new archive in the set; exit %d, stderr:\n%s", code, stderr.String())
	}
	return code, name
}
