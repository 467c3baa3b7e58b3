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
