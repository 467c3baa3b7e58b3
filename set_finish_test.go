package main

import (
	"archive/zip"
	"encoding/json"
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

// TestSetMetricsWrittenUnderLock: a run's metrics file is written before it releases the
// set's lock, so a run that waited for it (--wait) writes its metrics after, and the file
// describes the set's last run. strace holds the first run's rename of the metrics file.
func TestSetMetricsWrittenUnderLock(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	prom := filepath.Join(dir, "backup.prom")
	if err := os.WriteFile(prom, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, aErr := heldRun(t, dir, "renameat2", prom, "create", "--output-dir", set, "--metrics-file", prom, "app")
	waitFor(t, "A's metrics staged", func() bool {
		temps, _ := filepath.Glob(filepath.Join(dir, ".backup.prom.tmp-*"))
		return len(temps) > 0
	})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--wait", "1m", "--metrics-file", prom, "--exec-before", "false", "app")
	mustExit(t, r, exitFailed)
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr)
	}
	if got := exitMetric(t, prom); got != exitFailed {
		t.Errorf("the metrics file says the last run exited %v; the last run (B, after A) exited %d", got, exitFailed)
	}
}

// TestSetAfterHooksRunUnlocked: the --exec-after hooks of a set's run run once the set's
// lock is released (a hook may run backup on the set), and are still added to the run's
// receipt, under the lock taken again.
func TestSetAfterHooksRunUnlocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set,
		"--exec-after", binary+" prune --keep-last 5 "+set, "app")
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "another backup") {
		t.Errorf("the after hook found the set locked:\n%s", r.stderr)
	}
	latest := readLatest(t, set)
	data, err := os.ReadFile(filepath.Join(set, latest+format.ReceiptSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var rc format.Receipt
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	if len(rc.Hooks) != 1 || rc.Hooks[0].When != "after" || rc.Hooks[0].ExitCode != 0 {
		t.Errorf("receipt hooks %+v, want the after hook, exit 0", rc.Hooks)
	}
}

// TestAttackAfterHookRewritesPrunedReceipt: create releases the set's lock when its run
// ends, and only then runs the --exec-after hooks and rewrites its receipt to record them,
// by path, unconditionally. Another run that takes the lock meanwhile (here a create with
// --keep-last 1, which prunes the first run once LATEST moved past it) deletes the first
// run's archive and receipt; then the first run's rewrite puts its receipt back: the set
// holds a receipt without an archive that nobody's run left by a crash ("gone" in status),
// and a second copy of the run if prune had moved it to an --attic.
// Correct: nothing is written in a set without its lock: the receipt is rewritten while the
// lock is still held, or only on the condition that it is still the file the run wrote.
func TestAttackAfterHookRewritesPrunedReceipt(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	marker := filepath.Join(dir, "in-hook")
	a, aErr := startIn(t, dir, binary, "create", "--output-dir", set,
		"--exec-after", "touch "+marker+"; sleep 3", "app")
	waitFor(t, "the first run's after hook", func() bool { _, err := os.Stat(marker); return err == nil })
	first := readLatest(t, set)

	time.Sleep(1100 * time.Millisecond) // the next run starts in a later second
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	if _, err := os.Stat(filepath.Join(set, first)); err == nil {
		t.Fatalf("%s was not pruned; the test needs it pruned", first)
	}
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("first run: exit %d, %s", code, aErr.String())
	}
	if _, err := os.Stat(filepath.Join(set, first+".receipt.json")); err == nil {
		r := backup(t, runOpts{}, "status", set)
		t.Errorf("the pruned run %s has its receipt back in the set, written after its lock was released:\n%s", first, r.stdout)
	}
}

// startAtSecond waits for the start of the next second and returns it: a run started at
// once takes it (or, slow to start, the one after) as the time in its archive's name.
func startAtSecond() time.Time {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next) + 20*time.Millisecond)
	return next
}

// heldAtArchive starts create in set under strace, which holds for two seconds the first
// openat of the new archive's final name (its read-back: the archive is written under a
// temp name and renamed). The name is predicted from the second the run starts in.
func heldAtArchive(t *testing.T, dir, set string, args ...string) (*exec.Cmd, *strings.Builder, []string) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	s := startAtSecond()
	names := []string{backupsetName(s), backupsetName(s.Add(time.Second)), backupsetName(s.Add(2 * time.Second))}
	sargs := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=openat",
		"-e", "inject=openat:delay_enter=2000000:when=1"}
	for _, n := range names {
		sargs = append(sargs, "-P", filepath.Join(set, n))
	}
	cmd, stderr := startIn(t, dir, "strace", append(append(sargs, binary), args...)...)
	return cmd, stderr, names
}

func backupsetName(s time.Time) string { return "app-" + s.UTC().Format("20060102T150405Z") + ".zip" }

// flipDataByte changes one byte of the first stored file's data in the zip at path, as
// bit rot does: same size, same entries.
func flipDataByte(t *testing.T, path string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	for _, f := range zr.File {
		if f.CompressedSize64 > 0 && !strings.HasSuffix(f.Name, "/") && !strings.Contains(f.Name, "manifest") {
			if off, err = f.DataOffset(); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	zr.Close()
	if off < 0 {
		t.Fatal("no file data in " + path)
	}
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	b := make([]byte, 1)
	fh.ReadAt(b, off)
	b[0] ^= 0x55
	if _, err := fh.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestAttackInterruptedReadBackLeavesDamagedComplete: the new archive rots between its
// write and its read-back (a byte flipped, as the read-back exists to catch), and the run
// is stopped by SIGTERM (systemd's TimeoutStartSec, a shutdown) while it reads it back. The
// run exits 130, LATEST stays: but the receipt still says "complete" about an archive that
// does not read back. activate's read-back refuses it, yet status lists it as complete, and
// prune counts it as the newest complete backup: with --keep-last 2 it keeps the damaged
// archive and LATEST, and deletes the older good backup the user asked to keep. (A read-back
// that did find the damage is not recorded either when an interrupt came meanwhile:
// markDamaged is skipped whenever ctx is done.)
// Correct: a receipt never says complete about an archive that was not read back whole; a
// run stopped before its read-back finished leaves a receipt that prune and status do not
// count as a complete backup (or a found damage is recorded as failed, interrupted or not).
func TestAttackInterruptedReadBackLeavesDamagedComplete(t *testing.T) {
	t.Parallel()
	dir, set, a, b := newestSet(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"big": {content: strings.Repeat("data that rots\n", 2000)}})
	cmd, stderr, names := heldAtArchive(t, dir, set, "create", "--output-dir", set, "app")
	var name string
	waitFor(t, "the new archive in place", func() bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(set, n+".receipt.json")); err == nil {
				name = n
				return true
			}
		}
		return false
	})
	waitFor(t, "the read-back held", inSyscall(cmd, unix.SYS_OPENAT))
	flipDataByte(t, filepath.Join(set, name))
	syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Logf("exit %d, %s", code, stderr)
	}
	if got := readLatest(t, set); got != b {
		t.Fatalf("LATEST %s, want still %s", got, b)
	}
	if r := backup(t, runOpts{}, "verify", filepath.Join(set, name)); r.code == exitComplete {
		t.Fatalf("the flipped archive verifies; the test needs it damaged")
	}
	data, err := os.ReadFile(filepath.Join(set, name+".receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"status": "complete"`) || strings.Contains(string(data), `"status":"complete"`) {
		t.Errorf("the receipt of %s, which does not read back and whose read-back was interrupted, says complete", name)
	}
	r := backup(t, runOpts{}, "prune", "--keep-last", "2", set)
	if _, err := os.Stat(filepath.Join(set, a)); err != nil {
		t.Errorf("prune --keep-last 2 deleted the good backup %s, keeping the damaged %s in its place:\n%s", a, name, r.stdout)
	}
}

// TestKilledReadBackLeavesNoCompleteReceipt kills create (SIGKILL: the OOM killer, a power
// cut) while it reads the new archive back. No handler runs, so whatever the receipt said
// before the read-back is what stays: it must not call complete an archive that was never
// read back, which prune and status would count as the newest good backup (prune
// --keep-last 2 would then delete the older of the two good ones).
func TestKilledReadBackLeavesNoCompleteReceipt(t *testing.T) {
	t.Parallel()
	dir, set, a, b := newestSet(t)
	cmd, _, names := heldAtArchive(t, dir, set, "create", "--output-dir", set, "app")
	var name string
	waitFor(t, "the new archive in place", func() bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(set, n)); err == nil {
				name = n
				return true
			}
		}
		return false
	})
	waitFor(t, "the read-back held", inSyscall(cmd, unix.SYS_OPENAT))
	killGroup(cmd)
	cmd.Wait()
	if got := readLatest(t, set); got != b {
		t.Fatalf("LATEST %s, want still %s", got, b)
	}
	rc := readReceipt(t, filepath.Join(set, name+".receipt.json"))
	if rc.Status != format.Failed || !strings.Contains(rc.Error, "not verified") {
		t.Errorf("receipt of %s, killed in its read-back: status %q, error %q; want failed, not read back", name, rc.Status, rc.Error)
	}
	r := backup(t, runOpts{}, "prune", "--keep-last", "2", set)
	if _, err := os.Stat(filepath.Join(set, a)); err != nil {
		t.Errorf("prune --keep-last 2 deleted the good backup %s, counting %s, never read back:\n%s", a, name, r.stdout)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
}
