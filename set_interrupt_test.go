package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// heldRun runs the binary under strace, which holds the first call of syscall on path (on
// any path when path is "") for two seconds (delay_enter: the call is made after the hold),
// and returns it started.
func heldRun(t *testing.T, dir, syscallName, path string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "strace")
	sargs := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=" + syscallName,
		"-e", "inject=" + syscallName + ":delay_enter=2000000:when=1"}
	if path != "" {
		sargs = append(sargs, "-P", path)
	}
	sargs = append(sargs, binary)
	return startIn(t, dir, "strace", append(sargs, args...)...)
}

// interruptWhen sends SIGINT to the run strace holds once cond holds, and waits for it.
func interruptWhen(t *testing.T, cmd *exec.Cmd, what string, cond func() bool) int {
	t.Helper()
	waitFor(t, what, cond)
	if err := syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

// inSyscall says whether a thread of the run strace started is held at the system call
// number nr, as /proc shows it: in it at every look for heldFor. A look alone could catch an
// ordinary call of that number (the runtime opens files as it starts, before its signal
// handlers are set), and a SIGINT sent then kills the run.
func inSyscall(cmd *exec.Cmd, nr int) func() bool {
	since := map[string]time.Time{}
	return func() bool {
		now := time.Now()
		in := map[string]bool{}
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		for _, pid := range strings.Fields(string(children)) {
			tasks, _ := filepath.Glob(filepath.Join("/proc", pid, "task", "*", "syscall"))
			for _, task := range tasks {
				data, _ := os.ReadFile(task)
				if f := strings.Fields(string(data)); len(f) > 0 && f[0] == strconv.Itoa(nr) {
					in[task] = true
				}
			}
		}
		held := false
		for task := range since {
			if !in[task] {
				delete(since, task)
			}
		}
		for task := range in {
			if first, ok := since[task]; !ok {
				since[task] = now
			} else if now.Sub(first) >= heldFor {
				held = true
			}
		}
		return held
	}
}

// heldFor is how long a thread must stay in a system call to count as held there: far
// longer than any call takes, far shorter than strace's two-second hold.
const heldFor = 300 * time.Millisecond

// latestStaged says whether a writer of set has staged the new LATEST (its temp file is
// there): past that point nothing stops the rename.
func latestStaged(set string) func() bool {
	return func() bool {
		temps, _ := filepath.Glob(filepath.Join(set, ".LATEST.tmp-*"))
		return len(temps) > 0
	}
}

// TestSetInterruptedAsLatestMoves sends SIGINT to create while it renames the new LATEST
// into place: LATEST moves, so the run must say so (exit 0, "LATEST -> NEW", metrics of a
// complete run), not that it was interrupted with LATEST not moved.
func TestSetInterruptedAsLatestMoves(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	prom := filepath.Join(dir, "backup.prom")
	cmd, stderr := heldRun(t, dir, "renameat2", filepath.Join(set, "LATEST"),
		"create", "--output-dir", set, "--metrics-file", prom, "app")
	code := interruptWhen(t, cmd, "the new LATEST staged", latestStaged(set))
	archives := setArchives(t, set)
	newest := archives[len(archives)-2]
	if got := readLatest(t, set); got != newest {
		t.Fatalf("LATEST %q, want the new run %q (the rename was under way)", got, newest)
	}
	if code != exitComplete || !strings.Contains(stderr.String(), "LATEST -> "+newest) || strings.Contains(stderr.String(), "not moved") {
		t.Errorf("exit %d, stderr %q; want %d and LATEST -> %s, as it did", code, stderr, exitComplete, newest)
	}
	if got := exitMetric(t, prom); got != exitComplete {
		t.Errorf("metrics say exit %v, want %d", got, exitComplete)
	}
}

// TestActivateInterruptedAsLatestMoves: the same for activate, whose LATEST moved must not
// be reported as "interrupted; LATEST not moved" (exit 130).
func TestActivateInterruptedAsLatestMoves(t *testing.T) {
	t.Parallel()
	dir, set, a, _ := newestSet(t)
	cmd, stderr := heldRun(t, dir, "renameat2", filepath.Join(set, "LATEST"), "activate", set, a)
	code := interruptWhen(t, cmd, "the new LATEST staged", latestStaged(set))
	if got := readLatest(t, set); got != a {
		t.Fatalf("LATEST %q, want %q (the rename was under way)", got, a)
	}
	if code != exitComplete || strings.Contains(stderr.String(), "not moved") {
		t.Errorf("exit %d, stderr %q; want %d, as LATEST moved", code, stderr, exitComplete)
	}
}

// TestCreateInterruptedWhileSyncing sends SIGINT while the finished archive is synced
// (its first fsync held): the run stops there, as docs/operations.md (Signals and
// pipes) promises for an interrupt (exit 130, nothing at the final path, a failed receipt), instead of ignoring it and
// publishing the archive.
func TestCreateInterruptedWhileSyncing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir"}})
	prom := filepath.Join(dir, "backup.prom")
	// The archive's temp file is the first the run syncs.
	cmd, stderr := heldRun(t, dir, "fsync", "",
		"create", "-o", filepath.Join(out, "x.zip"), "--metrics-file", prom, "app")
	code := interruptWhen(t, cmd, "the archive's fsync", inSyscall(cmd, unix.SYS_FSYNC))
	if code != exitInterrupted {
		t.Errorf("exit %d, stderr %q; want %d", code, stderr, exitInterrupted)
	}
	if _, err := os.Stat(filepath.Join(out, "x.zip")); err == nil {
		t.Error("the interrupted run published its archive")
	}
	if rc := readReceipt(t, filepath.Join(out, "x.zip.receipt.json")); rc.Status != "failed" {
		t.Errorf("receipt says %s, want failed", rc.Status)
	}
	if got := exitMetric(t, prom); got != exitInterrupted {
		t.Errorf("metrics say exit %v, want %d", got, exitInterrupted)
	}
	if temps, _ := filepath.Glob(filepath.Join(out, ".*tmp-*")); len(temps) > 0 {
		t.Errorf("temp files left: %v", temps)
	}
}

// exitMetric is backup_last_exit_code in the metrics file at path, whatever its set label.
func exitMetric(t *testing.T, path string) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "backup_last_exit_code{") {
			return metricValue(t, path, strings.Fields(line)[0])
		}
	}
	t.Fatalf("%s has no backup_last_exit_code:\n%s", path, data)
	return 0
}

// TestSetKilledBetweenRenames kills create (SIGKILL) between the two renames that publish
// its archive and receipt in a folder set. Whatever is left must be something the set's own
// runs clear without help: after the next run and a prune, every archive has its receipt,
// and status shows no run it cannot account for (an archive alone would be "unknown, kept"
// for ever).
func TestSetKilledBetweenRenames(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, _, _ := newestSet(t)
	before := setArchives(t, set)
	// Each rename is held for two seconds: once one of the pair has landed, the run is
	// held at the other.
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_enter=2000000", binary, "create", "--output-dir", set, "app")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	held := inSyscall(cmd, unix.SYS_RENAMEAT2)
	waitFor(t, "one of the pair published", func() bool { return len(setArchives(t, set)) == len(before)+1 && held() })
	killGroup(cmd)

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	// killGroup waits for strace; the traced run, killed too, may hold the set's flock a
	// moment longer on a loaded machine (exit 4 once, in a full go test).
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--wait", "30s", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	r := backup(t, runOpts{}, "status", set)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stdout, "unknown") || strings.Contains(r.stdout, "gone") {
		t.Errorf("after the next run and its prune, status shows a run it cannot account for:\n%s", r.stdout)
	}
	files := setArchives(t, set)
	if len(files) != 2 {
		t.Errorf("the set holds %v, want the last run's archive and receipt", files)
	}
}

// TestAdoptActivateInterrupted: adopt --activate of an archive already in the set reads the
// copy back before LATEST moves; SIGINT there is an interrupt (exit 130, LATEST not moved),
// not a failure (exit 1).
func TestAdoptActivateInterrupted(t *testing.T) {
	t.Parallel()
	dir, set, first, elsewhere := adoptSet(t)
	mustExit(t, backup(t, runOpts{}, "adopt", set, elsewhere), exitComplete)
	copied := setArchives(t, set)[2]
	cmd, stderr := heldRun(t, dir, "openat", filepath.Join(set, copied), "adopt", "--activate", set, elsewhere)
	code := interruptWhen(t, cmd, "the read-back", inSyscall(cmd, unix.SYS_OPENAT))
	if code != exitInterrupted || readLatest(t, set) != first {
		t.Errorf("exit %d, LATEST %q, stderr %q; want %d and LATEST still %s", code, readLatest(t, set), stderr, exitInterrupted, first)
	}
}
