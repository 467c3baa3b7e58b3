package main

// Attack pass 12 on backup sets: each test is a finding, failing until the product is fixed.

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"filippo.io/age"
	"fmt"
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
	cmd := exec.Command("strace", append(append(sargs, binary), args...)...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &strings.Builder{}, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd, &stderr, names
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

// TestAttack12InterruptedReadBackLeavesDamagedComplete: the new archive rots between its
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
func TestAttack12InterruptedReadBackLeavesDamagedComplete(t *testing.T) {
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

// TestAttack12AdoptFutureRunSilencesAlerts: adopt takes the run's time from the receipt beside
// the archive, which no byte of the archive proves: a receipt edited (or written by a host
// whose clock is years ahead) to say the run started in 2099 is adopted as
// app-20990101T000000Z.zip. From then on it is the set's "newest complete backup" for ever:
// status --metrics-file reports backup_last_success_timestamp_seconds in 2099, so the
// BackupTooOld alert (time() - last success > 26h) can never fire again however stale LATEST
// gets, and prune's keep rules count it first and never delete it (--keep-last 2 keeps it
// and LATEST, deleting the real second-newest backup; --keep-within 30d, measured from the
// newest complete backup, deletes every real backup but LATEST).
// Correct: adopt refuses a run that started in the future (as status refuses such a LATEST:
// "started in the future, check the clock"), or the set never lets one count as its newest
// success.
func TestAttack12AdoptFutureRunSilencesAlerts(t *testing.T) {
	t.Parallel()
	dir, set, first, elsewhere := adoptSet(t)
	editReceipt(t, elsewhere+".receipt.json", func(rc map[string]any) {
		rc["started_at"], rc["finished_at"] = "2099-01-01T00:00:00Z", "2099-01-01T00:00:05Z"
	})
	r := backup(t, runOpts{}, "adopt", set, elsewhere)
	if r.code != exitComplete {
		return // refused: correct
	}
	prom := filepath.Join(dir, "status.prom")
	backup(t, runOpts{}, "status", "--metrics-file", prom, set)
	last := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+set+`"}`)
	if time.Unix(int64(last), 0).After(time.Now().Add(time.Minute)) {
		t.Errorf("adopted a run that started in 2099 (%s); status's metrics now say the last success is %s, which silences the age alert for ever",
			strings.TrimSpace(r.stdout), time.Unix(int64(last), 0).UTC())
	}
	// --keep-within is measured from the newest complete backup: 2099's. A month of real
	// backups is then "not kept by any rule".
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "c\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	r = backup(t, runOpts{}, "prune", "--keep-within", "30d", set)
	if _, err := os.Stat(filepath.Join(set, first)); err != nil {
		t.Errorf("prune --keep-within 30d deleted %s, a backup of minutes ago, measuring 30 days from the adopted 2099 run:\n%s", first, r.stdout)
	}
}

// TestAttack12MetricsWrittenAfterLockReleased: create writes --metrics-file after it has
// released the set's lock (finish runs after execute's deferred release), so the metrics of
// two runs of one set can land in the wrong order: run A completes and releases the lock;
// run B (waiting with --wait, as the systemd unit runs) takes it at once, fails, and writes
// its metrics (exit 1, failed); then A's metrics, synced and renamed a moment later, replace
// them. The file says the last run was complete (exit 0) while the last run failed: the
// BackupNotComplete alert stays quiet. strace holds A's rename of the metrics file to make
// the order certain; a slow fsync does the same on a busy disk.
// Correct: the metrics file of a set's run is written while the run holds the set's lock,
// so it always describes the set's last run.
func TestAttack12MetricsWrittenAfterLockReleased(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	prom := filepath.Join(dir, "backup.prom")
	if err := os.WriteFile(prom, nil, 0o644); err != nil { // as an earlier run left it
		t.Fatal(err)
	}
	a, aErr := heldRun(t, dir, "renameat2", prom, "create", "--output-dir", set, "--metrics-file", prom, "app")
	waitFor(t, "A's metrics staged", func() bool {
		temps, _ := filepath.Glob(filepath.Join(dir, ".backup.prom.tmp-*"))
		return len(temps) > 0
	})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--metrics-file", prom, "--exec-before", "false", "app")
	if r.code != exitFailed {
		t.Fatalf("B: exit %d, want %d (it took the lock A released): %s", r.code, exitFailed, r.stderr)
	}
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr)
	}
	if got := exitMetric(t, prom); got != exitFailed {
		t.Errorf("the metrics file says the last run exited %v; the last run of the set (B, after A) exited %d", got, exitFailed)
	}
}

// TestAttack12LostLatestLetsPlaintextIntoEncryptedSet: an encrypted set refuses a plain run
// (exit 2: a host that lost its --recipient must not write names and contents in clear into
// a set, or a bucket, whose point is that they are not there). But create checks the kind
// only against LATEST: with LATEST missing (lost, or deleted by whoever can write the set)
// or junk, the plain run is taken, writes app-….zip (the source's name, every file name and
// content in clear) beside the encrypted runs, and moves LATEST to it; from then on the set
// counts as plain and refuses the encrypted runs that belong to it.
// Correct: as activate and adopt do for the source, create falls back to the set's newest
// run when LATEST cannot tell, and refuses the run of the other kind (exit 2, nothing
// written).
func TestAttack12LostLatestLetsPlaintextIntoEncryptedSet(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"secret-name.txt": {content: "secret content\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--recipient", id.Recipient().String(), "app"), exitComplete)
	if r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"); r.code != exitUsage {
		t.Fatalf("a plain run into the encrypted set: exit %d, want %d: %s", r.code, exitUsage, r.stderr)
	}
	for _, latest := range []string{"junk\n", ""} {
		if latest == "" {
			os.Remove(filepath.Join(set, "LATEST"))
		} else if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte(latest), 0o644); err != nil {
			t.Fatal(err)
		}
		r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
		plain, _ := filepath.Glob(filepath.Join(set, "app-*.zip"))
		if r.code != exitUsage || len(plain) > 0 {
			t.Errorf("LATEST %q: a plain run into the encrypted set: exit %d, wrote %v; want %d and nothing written:\n%s",
				latest, r.code, plain, exitUsage, r.stderr)
		}
		for _, p := range plain {
			os.Remove(p)
			os.Remove(p + ".receipt.json")
		}
	}
}

// TestAttack12LostLatestLetsAnotherSourceTakeTheSet: the same for "one source per set":
// with LATEST missing, a run of another source (a cron line with the wrong folder) is taken
// and moves LATEST to its archive; the set's own source is then refused ("the backup set of
// other"), its runs kept for ever as another source's, and every later run of the set fails
// until someone edits LATEST by hand. activate and adopt fall back to the newest run's
// source; create does not.
// Correct: with no LATEST to tell, create checks the source against the newest run and
// refuses another (exit 1, nothing written).
func TestAttack12LostLatestLetsAnotherSourceTakeTheSet(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	makeTree(t, filepath.Join(dir, "other"), map[string]node{"o": {content: "o\n"}})
	if err := os.Remove(filepath.Join(set, "LATEST")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "other")
	others, _ := filepath.Glob(filepath.Join(set, "other-*"))
	if r.code == exitComplete || len(others) > 0 {
		t.Errorf("another source's run into the set of app with LATEST missing: exit %d, wrote %v, LATEST %s; want it refused",
			r.code, others, readLatest(t, set))
	}
	if r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"); r.code != exitComplete {
		t.Errorf("the set's own source is now refused: exit %d, %s", r.code, r.stderr)
	}
}

// TestAttack12StatusRacingPruneSaysDamaged: status (and sets, verify DIR, restore DIR) reads
// LATEST, then looks up the archive it names, without the set's lock (status "runs while
// backups run"). A create with --keep-last 1 that moves LATEST and prunes the old target in
// between makes status say "LATEST: names X: the archive is missing", exit 1, and write
// backup_set_healthy 0, about a set that was healthy at every moment: the hourly check mails
// a damaged set. strace holds status between the two reads (its second lstat of the old
// archive) to make the order certain.
// Correct: a reader whose LATEST target is gone reads LATEST again, and reports damage only
// when the pointer it reads still names a missing archive.
func TestAttack12StatusRacingPruneSaysDamaged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	old := readLatest(t, set)
	prom := filepath.Join(dir, "status.prom")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, old),
		"-e", "trace=newfstatat", "-e", "inject=newfstatat:delay_enter=3000000:when=2",
		binary, "status", "--metrics-file", prom, set)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "status held after reading LATEST", inSyscall(cmd, unix.SYS_NEWFSTATAT))
	time.Sleep(1100 * time.Millisecond)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "b\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Errorf("status of a set that was healthy throughout: exit %d, healthy metric %v:\n%s",
			code, metricValue(t, prom, `backup_set_healthy{set="`+set+`"}`), out.String())
	}
}

// TestAttack12LockFileReplacedTwoRuns: the lock is a flock on whatever file is at
// DIR/.backup.lock when a run opens it; nothing checks, once it holds the flock, that the
// file is still the one at that name. A lock file removed or replaced while a run holds it
// (an rsync of the set folder, a cleanup script removing "stale lock files", which the docs
// call harmless) lets the next run create a new one and lock that: two runs of the set at
// once, the second not exiting 4. The folder's compare-and-swap of LATEST is a check then a
// rename, exclusive only under the lock, so two such runs can both say "LATEST -> …".
// Correct: after taking the flock a run checks that the path still names the file it
// locked (same device and inode), and otherwise opens and locks it again, as every
// lock-file protocol that unlinks (or lets others unlink) does.
func TestAttack12LockFileReplacedTwoRuns(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	marker := filepath.Join(dir, "holding")
	a := exec.Command(binary, "create", "--output-dir", set, "--exec-before", "touch "+marker+"; sleep 3", "app")
	a.Dir = dir
	var aErr strings.Builder
	a.Stdout, a.Stderr = &strings.Builder{}, &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	waitFor(t, "the first run holding the lock", func() bool { _, err := os.Stat(marker); return err == nil })
	if err := os.Remove(filepath.Join(set, ".backup.lock")); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	a.Wait()
	if r.code != exitLocked {
		t.Errorf("a second run while the first held the set (its lock file removed meanwhile): exit %d, want %d:\n%s", r.code, exitLocked, r.stderr)
	}
}

// TestAttack12S3LostLatestLetsPlaintextIntoEncryptedBucket: the bucket form of
// TestAttack12LostLatestLetsPlaintextIntoEncryptedSet, where it matters most ("a set in a
// bucket reveals no file name and no content"): with the LATEST object gone (a lifecycle
// rule, a bad cleanup, anyone who may delete in the prefix), a host whose timer lost its
// --recipient uploads app-….zip in clear, with the source's name in the key, next to the
// encrypted runs, and takes LATEST.
// Correct: refused (exit 2, nothing uploaded), the kind taken from the newest run when
// LATEST cannot tell.
func TestAttack12S3LostLatestLetsPlaintextIntoEncryptedBucket(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"secret-name.txt": {content: "secret content\n"}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: s.env}, args...) }
	mustExit(t, run("create", "--output-dir", s.loc, "--recipient", id.Recipient().String(), "app"), exitComplete)
	mustExit(t, run("create", "--output-dir", s.loc, "app"), exitUsage)
	if err := os.Remove(filepath.Join(s.dir, "LATEST")); err != nil {
		t.Fatal(err)
	}
	r := run("create", "--output-dir", s.loc, "app")
	plain, _ := filepath.Glob(filepath.Join(s.dir, "app-*.zip"))
	if r.code != exitUsage || len(plain) > 0 {
		t.Errorf("a plain run into the encrypted bucket set without LATEST: exit %d, uploaded %v; want %d and nothing uploaded:\n%s",
			r.code, plain, exitUsage, r.stderr)
	}
}

// mountCoarseExt4 mounts a small ext4 with 128-byte inodes, whose timestamps have whole
// seconds only (as ext3, HFS+ and many network and FUSE file systems), at dir.
func mountCoarseExt4(t *testing.T, dir string) {
	t.Helper()
	mustRoot(t)
	mustTool(t, "mkfs.ext4")
	img := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-I", "128", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot loop-mount: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// TestAttack12ReuseRacyCleanFile: a set's run copies a file's entry from the last backup
// when its size, mtime, ctime, inode and mode are those the last backup recorded. On a file
// system whose timestamps have whole seconds, a file rewritten in place (same size) within
// the second in which the last backup read it keeps all five: the next run copies the old
// content, says complete, and so does every run after it until the file's metadata moves
// again. The new content is in no backup, and nothing says so. (Git calls such entries
// "racily clean" and checks them again; borg does not trust a file whose mtime is too
// recent; with nanosecond timestamps the same window is the kernel's clock tick.)
// Correct: an entry whose mtime or ctime is not strictly before the reference run's start, at
// the file system's granularity, is not trusted as unchanged: the file is read again.
func TestAttack12ReuseRacyCleanFile(t *testing.T) {
	t.Parallel()
	mustTool(t, "unzip")
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mountCoarseExt4(t, mnt)
	app := filepath.Join(mnt, "app")
	f := filepath.Join(app, "f")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "set")
	stamp := func() string {
		var st unix.Stat_t
		if err := unix.Stat(f, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(st.Mtim, st.Ctim, st.Ino, st.Size)
	}
	same := false
	for try := 0; try < 5 && !same; try++ {
		os.RemoveAll(set)
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		if err := os.WriteFile(f, []byte("old content\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := stamp()
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, app), exitComplete)
		if err := os.WriteFile(f, []byte("NEW CONTENT\n"), 0o644); err != nil { // in place, same size
			t.Fatal(err)
		}
		same = stamp() == before
	}
	if !same {
		t.Skip("could not run and rewrite within one second")
	}
	time.Sleep(1100 * time.Millisecond)
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, app)
	mustExit(t, r, exitComplete)
	got, err := exec.Command("unzip", "-p", filepath.Join(set, readLatest(t, set)), "app/f").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "NEW CONTENT\n" {
		t.Errorf("the file holds %q; the complete backup LATEST names holds %q, copied from the last backup:\n%s",
			"NEW CONTENT\n", got, r.stderr)
	}
}

// TestAttack12ActivateIncompleteExit3ButLatestMoved: the README's exit codes say of create
// in a set "exit 3 there means LATEST was not moved and nothing was pruned". With
// --activate-incomplete an incomplete run moves LATEST (as asked) and still exits 3, the
// code a script reads as "LATEST not moved": the exit code and LATEST disagree with the
// contract scripts are told to depend on.
// Correct: either the contract says that with --activate-incomplete exit 3 means LATEST
// moved to the incomplete backup, or the run gets a code that does not claim LATEST stayed.
func TestAttack12ActivateIncompleteExit3ButLatestMoved(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	as := runOpts{dir: dir, uid: nobody}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"ok.txt": {content: "ok\n"}, "secret": {content: "s\n"}})
	set := filepath.Join(dir, "set")
	makeTree(t, set, map[string]node{".": {kind: "dir", mode: 0o777}})
	mustExit(t, backup(t, as, "create", "--output-dir", set, "app"), exitComplete)
	before := readLatest(t, set)
	if err := os.Chmod(filepath.Join(dir, "app", "secret"), 0o200); err != nil {
		t.Fatal(err)
	}
	r := backup(t, as, "create", "--output-dir", set, "--activate-incomplete", "app")
	if r.code == exitIncomplete && readLatest(t, set) != before {
		t.Errorf("exit 3 (\"LATEST was not moved\", README) but LATEST moved from %s to %s:\n%s", before, readLatest(t, set), r.stderr)
	}
}

// TestAttack12PruneStoppedHidesDeletedArchive: prune deletes a run's archive, then its
// receipt; when the receipt's unlink fails (EIO here, by strace), prune stops and reports
// the runs decided before that one only: "deleted 0, then stopped" (create --keep-*:
// "pruned 0, kept 0"), while the archive is gone from the set. The user is told nothing was
// deleted; status then shows the run as "gone".
// Correct: a run whose archive was deleted is listed as deleted (or as partly deleted, with
// its receipt left), and the count says so.
func TestAttack12PruneStoppedHidesDeletedArchive(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, a, _ := newestSet(t)
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, a+".receipt.json"),
		"-e", "trace=unlinkat", "-e", "inject=unlinkat:error=EIO:when=1",
		binary, "prune", "--keep-last", "1", set)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if _, err := os.Stat(filepath.Join(set, a)); err == nil {
		t.Fatalf("%s was not deleted; the test needs its archive deleted: %s%s", a, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), a) || strings.Contains(stdout.String(), "deleted 0") {
		t.Errorf("prune deleted the archive %s, but says:\n%s%s", a, stdout.String(), stderr.String())
	}
}

// TestAttack12UnprivilegedUserHoldsSetLock: the set's lock file is created 0644 in a 0755
// folder, and the lock is a flock, which any process that can open the file (read-only is
// enough) can take. So any local user (nobody here) can hold the lock of root's set for as
// long as they like: every backup then exits 4, which the README's crontab ignores on
// purpose ("Exit 4 (a run still going) is not worth a mail"). Backups stop, silently, until
// an age check notices.
// Correct: only those who may write the set can lock it (the lock file created 0600, or
// opened for writing only), so that another user's process can never stop its backups.
func TestAttack12UnprivilegedUserHoldsSetLock(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	dir := sharedTempDir(t)
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	held := exec.Command("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
		"flock", filepath.Join(set, ".backup.lock"), "sleep", "5")
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Process.Kill(); held.Wait() })
	time.Sleep(300 * time.Millisecond)
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	if r.code == exitLocked {
		t.Errorf("an unprivileged user holds root's set: create exits %d: %s", r.code, r.stderr)
	}
}

// TestAttack12SetsRacingPruneSaysDamaged: the fleet check has the same window as status
// (TestAttack12StatusRacingPruneSaysDamaged): `backup sets` reads a set's LATEST, then the
// receipt of the archive it names; a create with --keep-last 1 that moves LATEST and prunes
// the old target in between makes sets report the set "damaged" ("its receipt is missing"),
// exit 1: the line cron mails, about a set that was healthy at every moment. The docs say
// sets "runs while backups run" and reads a moving fleet right.
// Correct: a target that is gone when read makes sets read LATEST again before it calls the
// set damaged.
func TestAttack12SetsRacingPruneSaysDamaged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet")
	set := filepath.Join(fleet, "web1")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	old := readLatest(t, set)
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, old+".receipt.json"),
		"-e", "trace=openat", "-e", "inject=openat:delay_enter=3000000:when=1", binary, "sets", fleet)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "sets held after reading LATEST", inSyscall(cmd, unix.SYS_OPENAT))
	time.Sleep(1100 * time.Millisecond)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "b\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Errorf("sets over a set that was healthy throughout: exit %d:\n%s", code, out.String())
	}
}

// TestAttack12ReferenceDamageSkipsReadBack: a set's read-back does not inflate the entries a
// run copied from its reference, on the ground (docs/reuse.md) that they equal the
// reference's bytes, "whose own read-back inflated them". That holds for LATEST's archive,
// not for an archive given with --reference, which may never have been read back (create
// -o without --verify). Here the reference's app/big is damaged (CRC-32 mismatch; its receipt
// records the damaged bytes, as when they went bad before they were hashed, or a receipt
// rewritten): backup verify rejects it. A set run with --reference copies the damaged entry,
// its read-back passes, it says complete (exit 0) and moves LATEST to an archive that backup
// verify rejects.
// Correct: an entry copied from a reference that was not read back by this tool (or any
// copied entry) is inflated and checked against its CRC-32 and SHA-256 before LATEST may
// name the new archive, or the damaged entry is read from the file instead.
func TestAttack12ReferenceDamageSkipsReadBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var big strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&big, "%d\n", i)
	}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"big": {content: big.String()}, "a": {content: "a\n"}})
	ref := filepath.Join(dir, "ref.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", ref, "app"), exitComplete)

	zr, err := zip.OpenReader(ref)
	if err != nil {
		t.Fatal(err)
	}
	var off, size int64
	for _, f := range zr.File {
		if f.Name == "app/big" {
			off, _ = f.DataOffset()
			size = int64(f.CompressedSize64)
		}
	}
	zr.Close()
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	data[off+size/2] ^= 0x55
	if err := os.WriteFile(ref, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	editReceipt(t, ref+".receipt.json", func(rc map[string]any) {
		a := rc["archive"].(map[string]any)
		a["sha256"], a["size"] = hex.EncodeToString(sum[:]), len(data)
	})
	if r := backup(t, runOpts{}, "verify", ref); r.code == exitComplete {
		t.Fatal("the damaged reference verifies; the test needs it damaged")
	}

	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--reference", ref, "app")
	if r.code == exitComplete {
		if v := backup(t, runOpts{}, "verify", set); v.code != exitComplete {
			t.Errorf("create said complete and moved LATEST to %s, which backup verify rejects:\n%s%s%s", readLatest(t, set), r.stderr, v.stdout, v.stderr)
		}
	}
}
