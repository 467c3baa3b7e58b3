package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackForceOutputRacingPairsMismatch: two `create --force -o X` at once publish the
// archive and its receipt as two renames each (RENAME_EXCHANGE). A, held by strace just
// after its archive's exchange, lets B exchange its archive and its receipt in and remove
// what they replaced (A's new archive); then A exchanges its receipt in. Both runs exit 0,
// X is B's archive, X.receipt.json is A's receipt, of an archive that is gone: verify fails
// the pair, and A's backup, which A said was written, is nowhere.
// Correct: the pair a run publishes is never split by another run's: the runs take turns,
// and X and its receipt are the last run's, whole; verify passes.
func TestAttackForceOutputRacingPairsMismatch(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "first\n"}})
	out := filepath.Join(dir, "out.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"), exitComplete)

	a, aErr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-P", out, "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_exit=3000000:when=1", binary, "create", "-q", "--force", "-o", out, "app")
	waitFor(t, "A held after its archive's exchange", inSyscall(a, unix.SYS_RENAMEAT2))

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "second, longer\n"}})
	b := backup(t, runOpts{dir: dir}, "create", "-q", "--force", "-o", out, "app")
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr.String())
	}
	mustExit(t, b, exitComplete)
	if r := backup(t, runOpts{dir: dir}, "verify", "-q", out); r.code != exitComplete {
		data, _ := os.ReadFile(out)
		sum := sha256.Sum256(data)
		t.Errorf("both runs exit 0, and the archive and receipt at %s are not a pair (archive sha256 %s): verify exit %d:\n%s",
			out, hex.EncodeToString(sum[:]), r.code, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// TestAttackLockedRunMetricsHidesSuccess: a run that finds the set locked (exit 4) writes
// its metrics file too, carrying backup_last_success_timestamp_seconds over from the file
// it replaces. It reads that value first and replaces the file later, without the set's
// lock; held by strace in between (at the fsync of its new file), the run holding the set
// finishes, moves LATEST and writes its own metrics (complete); then the locked run's file
// replaces them: the last success is the one before, and the last run an exit 4 that
// ended before the success. The age alert on the last success fires about a set whose
// LATEST is fresh.
// Correct: a value carried over is read from the file the new one replaces, never from
// one replaced meanwhile: the last success is never older than LATEST's run.
func TestAttackLockedRunMetricsHidesSuccess(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	prom := filepath.Join(dir, "set.prom")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--metrics-file", prom, "app"), exitComplete)
	time.Sleep(1100 * time.Millisecond) // the next run finishes in a later second

	marker := filepath.Join(dir, "holding")
	a, aErr := startIn(t, dir, binary, "create", "-q", "--output-dir", set, "--metrics-file", prom,
		"--exec-before", "touch "+marker+"; sleep 2", "app")
	waitFor(t, "the first run holding the set", func() bool { _, err := os.Stat(marker); return err == nil })

	b := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync",
		"-e", "inject=fsync:delay_enter=5000000:when=1", binary, "create", "-q", "--output-dir", set, "--metrics-file", prom, "app")
	b.Dir = dir
	rb := runCmd(t, b)
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr.String())
	}
	mustExit(t, rb, exitLocked)
	latest := readReceipt(t, filepath.Join(set, readLatest(t, set)+".receipt.json"))
	got := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+set+`"}`)
	if want := float64(latest.FinishedAt.Unix()); got < want {
		data, _ := os.ReadFile(prom)
		t.Errorf("backup_last_success_timestamp_seconds %v, older than LATEST's run, which finished at %v (complete, exit 0):\n%s", got, want, data)
	}
}
