package main

// Attack pass 12 on backup sets: each test is a finding, failing until the product is fixed.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lockSetFromTest takes the set's flock from the test process, as a running backup of the
// set holds it, and returns the function that releases it.
func lockSetFromTest(t *testing.T, set string) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(set, ".backup.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			f.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// statusOf runs status --json on set and decodes it.
func statusOf(t *testing.T, set string) (statusJSON, result) {
	t.Helper()
	r := backup(t, runOpts{}, "status", "--json", set)
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return st, r
}

// TestAttack12WaitingRunMovesLatestBackward: two runs of one set wait for its lock (--wait,
// as the systemd unit runs create), B started first, C a second later. C gets the lock first
// (flock is polled, so who wins is chance; strace makes B's retries slow so that it is
// always C here), backs up and moves LATEST to C. Then B gets the lock, backs up the tree as
// it is now, and moves LATEST to its archive, whose name and receipt's started_at are those
// of the moment B was started, before it waited: LATEST now names a backup older (by the
// set's own order: started_at, which status, prune and --max-age go by) than the one it
// named before, and status reports "LATEST is not the newest complete backup … not
// activated by hand" about a set that nobody touched by hand.
// Correct: LATEST never moves to a run older than the one it names: a run's start (its
// name, its started_at) is taken once it holds the set's lock, or a run whose start is
// older than LATEST's target does not move LATEST.
func TestAttack12WaitingRunMovesLatestBackward(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, _, _ := newestSet(t)
	release := lockSetFromTest(t, set)

	// B: every retry of the lock after the first is held 5 seconds by strace.
	b := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=flock",
		"-e", "inject=flock:delay_enter=5000000:when=2+", binary,
		"create", "--wait", "1m", "--output-dir", set, "app")
	b.Dir = dir
	b.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var bErr strings.Builder
	b.Stdout, b.Stderr = &strings.Builder{}, &bErr
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(b) })
	waitFor(t, "B waiting in a held flock", inSyscall(b, unix.SYS_FLOCK))
	time.Sleep(1100 * time.Millisecond) // C starts in a later second than B

	c := exec.Command(binary, "create", "--wait", "1m", "--output-dir", set, "app")
	c.Dir = dir
	var cErr strings.Builder
	c.Stdout, c.Stderr = &strings.Builder{}, &cErr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // C polls the lock
	waitFor(t, "B still held in its flock", inSyscall(b, unix.SYS_FLOCK))
	release()
	if err := c.Wait(); err != nil {
		t.Fatalf("C: %v, %s", err, cErr.String())
	}
	cLatest := readLatest(t, set)
	b.Wait()
	if code := b.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("B: exit %d, %s", code, bErr.String())
	}
	bLatest := readLatest(t, set)
	st, _ := statusOf(t, set)
	if st.NewestComplete != "" || setOrder(bLatest).stamp < setOrder(cLatest).stamp {
		r := backup(t, runOpts{}, "status", set)
		t.Errorf("LATEST moved from %s (C, started second) back to %s (B, started first, waited for the lock);\nstatus: %s%s",
			cLatest, bLatest, r.stdout, r.stderr)
	}
}

// TestAttack12AfterHookRewritesPrunedReceipt: create releases the set's lock when its run
// ends, and only then runs the --exec-after hooks and rewrites its receipt to record them,
// by path, unconditionally. Another run that takes the lock meanwhile (here a create with
// --keep-last 1, which prunes the first run once LATEST moved past it) deletes the first
// run's archive and receipt; then the first run's rewrite puts its receipt back: the set
// holds a receipt without an archive that nobody's run left by a crash ("gone" in status),
// and a second copy of the run if prune had moved it to an --attic.
// Correct: nothing is written in a set without its lock: the receipt is rewritten while the
// lock is still held, or only on the condition that it is still the file the run wrote.
func TestAttack12AfterHookRewritesPrunedReceipt(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	marker := filepath.Join(dir, "in-hook")
	a := exec.Command(binary, "create", "--output-dir", set,
		"--exec-after", "touch "+marker+"; sleep 3", "app")
	a.Dir = dir
	var aErr strings.Builder
	a.Stdout, a.Stderr = &strings.Builder{}, &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
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
