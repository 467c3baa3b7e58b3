package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSetRacingWriters races two real processes on one set, 20 times for each pair of
// writers: create against adopt, activate and prune --attic, and two adopts of one archive.
// With --wait every run succeeds, one after the other; after each round the set is healthy
// and verifies, holds no temp file, every archive has its receipt, and the attic holds whole
// pairs only.
func TestSetRacingWriters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		other func(set, older, elsewhere, attic string) []string
	}{
		{"adopt", func(set, _, elsewhere, _ string) []string { return []string{"adopt", set, elsewhere} }},
		{"activate", func(set, older, _, _ string) []string { return []string{"activate", set, older} }},
		{"prune", func(set, _, _, attic string) []string {
			return []string{"prune", "--keep-last", "2", "--attic", attic, set}
		}},
		{"adopt twice", func(set, _, elsewhere, _ string) []string { return []string{"adopt", set, elsewhere} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, set, older, elsewhere := adoptSet(t)
			attic := filepath.Join(dir, "attic")
			makeTree(t, attic, map[string]node{".": {kind: "dir"}})
			first := []string{"create", "--output-dir", set, "app"}
			if tt.name == "adopt twice" {
				first = []string{"adopt", set, elsewhere}
			}
			for round := range 20 {
				runs := startPair(t, dir, withWait(first), withWait(tt.other(set, older, elsewhere, attic)))
				for _, cmd := range runs {
					if code := cmd.ProcessState.ExitCode(); code != exitComplete {
						t.Fatalf("round %d: %v: exit %d, stderr %s", round, cmd.Args[1:], code, cmd.Stderr)
					}
				}
				checkSetWhole(t, set, attic)
			}
		})
	}
}

// withWait adds --wait to a command's arguments, after its name.
func withWait(args []string) []string {
	return append([]string{args[0], "--wait", "1m"}, args[1:]...)
}

// startPair starts two runs of the binary at once and waits for both.
func startPair(t *testing.T, dir string, a, b []string) []*exec.Cmd {
	t.Helper()
	cmds := []*exec.Cmd{exec.Command(binary, a...), exec.Command(binary, b...)}
	for _, cmd := range cmds {
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &strings.Builder{}, &strings.Builder{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		cmd.Wait()
	}
	return cmds
}

// checkSetWhole checks what any writer must leave: a healthy set whose LATEST verifies, no
// temp file, each archive with its receipt, and in the attic whole pairs.
func checkSetWhole(t *testing.T, set, attic string) {
	t.Helper()
	if r := backup(t, runOpts{}, "status", set); r.code != exitComplete {
		t.Fatalf("status: exit %d, %s", r.code, r.stderr)
	}
	if r := backup(t, runOpts{}, "verify", "-q", set); r.code != exitComplete {
		t.Fatalf("verify: exit %d, %s", r.code, r.stderr)
	}
	for _, dir := range []string{set, attic} {
		if temps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(temps) > 0 {
			t.Fatalf("temp files left: %v", temps)
		}
		files := setArchives(t, dir)
		for _, f := range files {
			pair := f + ".receipt.json"
			if strings.HasSuffix(f, ".receipt.json") {
				pair = strings.TrimSuffix(f, ".receipt.json")
			}
			if !slices.Contains(files, pair) {
				t.Fatalf("%s holds %s without %s: %v", dir, f, pair, files)
			}
		}
	}
}

// TestPruneAtticSharedRacing races two prunes of two sets into one attic on another file
// system (each copies, under a journal of its own), 20 times: both succeed, the attic holds
// whole pairs only, and no temp file or journal is left, though each prune sweeps the attic
// while the other one copies into it.
func TestPruneAtticSharedRacing(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	attic := filepath.Join(dir, "attic")
	makeTree(t, attic, map[string]node{".": {kind: "dir"}})
	mountTmpfs(t, attic, "64m")
	sets := []string{filepath.Join(dir, "one"), filepath.Join(dir, "two")}
	for i, set := range sets {
		makeTree(t, filepath.Join(dir, "app"+strconv.Itoa(i)), map[string]node{"a": {content: "a\n"}})
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"+strconv.Itoa(i)), exitComplete)
	}
	for round := range 20 {
		for i, set := range sets {
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"+strconv.Itoa(i)), exitComplete)
		}
		runs := startPair(t, dir, []string{"prune", "--keep-last", "1", "--attic", attic, sets[0]},
			[]string{"prune", "--keep-last", "1", "--attic", attic, sets[1]})
		for _, cmd := range runs {
			if code := cmd.ProcessState.ExitCode(); code != exitComplete {
				t.Fatalf("round %d: %v: exit %d, stderr %s", round, cmd.Args[1:], code, cmd.Stderr)
			}
		}
		if extra, _ := filepath.Glob(filepath.Join(attic, ".*")); len(extra) > 0 {
			t.Fatalf("round %d: left in the attic: %v", round, extra)
		}
		for _, set := range sets {
			checkSetWhole(t, set, attic)
		}
	}
	// Every pruned run is in the attic whole: 20 from each set, each with its receipt.
	files := listDir(t, attic)
	for _, f := range files {
		if archive, ok := strings.CutSuffix(f, ".receipt.json"); ok && !slices.Contains(files, archive) {
			t.Errorf("the attic holds %s without its archive", f)
		} else if !ok && !slices.Contains(files, f+".receipt.json") {
			t.Errorf("the attic holds %s without its receipt", f)
		}
	}
	if len(files) != 2*2*20 {
		t.Errorf("the attic holds %d files, want %d: every pruned run's pair", len(files), 2*2*20)
	}
}

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

// TestAttackWaitingRunMovesLatestBackward: two runs of one set wait for its lock (--wait,
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
func TestAttackWaitingRunMovesLatestBackward(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, _, _ := newestSet(t)
	release := lockSetFromTest(t, set)

	// B: every retry of the lock after the first is held 5 seconds by strace.
	b, bErr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=flock",
		"-e", "inject=flock:delay_enter=5000000:when=2+", binary,
		"create", "--wait", "1m", "--output-dir", set, "app")
	waitFor(t, "B waiting in a held flock", inSyscall(b, unix.SYS_FLOCK))
	time.Sleep(1100 * time.Millisecond) // C starts in a later second than B

	c, cErr := startIn(t, dir, binary, "create", "--wait", "1m", "--output-dir", set, "app")
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

// TestAttackStatusRacingPruneSaysDamaged: status (and sets, verify DIR, restore DIR) reads
// LATEST, then looks up the archive it names, without the set's lock (status "runs while
// backups run"). A create with --keep-last 1 that moves LATEST and prunes the old target in
// between makes status say "LATEST: names X: the archive is missing", exit 1, and write
// backup_set_healthy 0, about a set that was healthy at every moment: the hourly check mails
// a damaged set. strace holds status between the two reads (its second lstat of the old
// archive) to make the order certain.
// Correct: a reader whose LATEST target is gone reads LATEST again, and reports damage only
// when the pointer it reads still names a missing archive.
func TestAttackStatusRacingPruneSaysDamaged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	old := readLatest(t, set)
	prom := filepath.Join(dir, "status.prom")
	code, out := heldWhilePruned(t, dir, set, filepath.Join(set, old), "newfstatat:delay_enter=3000000:when=2", unix.SYS_NEWFSTATAT,
		"status", "--metrics-file", prom, set)
	if now := readLatest(t, set); now == old {
		t.Fatalf("the create did not move LATEST from %s", old)
	}
	if code != exitComplete {
		t.Errorf("status of a set that was healthy throughout: exit %d, healthy metric %v:\n%s",
			code, metricValue(t, prom, `backup_set_healthy{set="`+set+`"}`), out)
	}
}

// TestAttackLockFileReplacedTwoRuns: the lock is a flock on whatever file is at
// DIR/.backup.lock when a run opens it; nothing checks, once it holds the flock, that the
// file is still the one at that name. A lock file removed or replaced while a run holds it
// (an rsync of the set folder, a cleanup script removing "stale lock files", which the docs
// call harmless) lets the next run create a new one and lock that: two runs of the set at
// once, the second not exiting 4. The folder's compare-and-swap of LATEST is a check then a
// rename, exclusive only under the lock, so two such runs can both say "LATEST -> …".
// Correct: after taking the flock a run checks that the path still names the file it
// locked (same device and inode), and otherwise opens and locks it again, as every
// lock-file protocol that unlinks (or lets others unlink) does.
func TestAttackLockFileReplacedTwoRuns(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	marker := filepath.Join(dir, "holding")
	a, _ := startIn(t, dir, binary, "create", "--output-dir", set, "--exec-before", "touch "+marker+"; sleep 3", "app")
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

// TestAttackUnprivilegedUserHoldsSetLock: the set's lock file is created 0644 in a 0755
// folder, and the lock is a flock, which any process that can open the file (read-only is
// enough) can take. So any local user (nobody here) can hold the lock of root's set for as
// long as they like: every backup then exits 4, which the README's crontab ignores on
// purpose ("Exit 4 (a run still going) is not worth a mail"). Backups stop, silently, until
// an age check notices.
// Correct: only those who may write the set can lock it (the lock file created 0600, or
// opened for writing only), so that another user's process can never stop its backups.
func TestAttackUnprivilegedUserHoldsSetLock(t *testing.T) {
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

// TestAttackSetsRacingPruneSaysDamaged: the fleet check has the same window as status
// (TestAttackStatusRacingPruneSaysDamaged): `backup sets` reads a set's LATEST, then the
// receipt of the archive it names; a create with --keep-last 1 that moves LATEST and prunes
// the old target in between makes sets report the set "damaged" ("its receipt is missing"),
// exit 1: the line cron mails, about a set that was healthy at every moment. The docs say
// sets "runs while backups run" and reads a moving fleet right.
// Correct: a target that is gone when read makes sets read LATEST again before it calls the
// set damaged.
func TestAttackSetsRacingPruneSaysDamaged(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet")
	set := filepath.Join(fleet, "web1")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	old := readLatest(t, set)
	code, out := heldWhilePruned(t, dir, set, filepath.Join(set, old+".receipt.json"), "openat:delay_enter=3000000:when=1", unix.SYS_OPENAT,
		"sets", fleet)
	if code != exitComplete {
		t.Errorf("sets over a set that was healthy throughout: exit %d:\n%s", code, out)
	}
}

// heldWhilePruned runs the binary with args under strace, held in the system call sysno on
// path as inject says, and meanwhile runs a create of dir's app into set that prunes the
// archive LATEST named; it returns the held command's exit code and output. strace counts
// a call's invocations per thread, and Go may make two calls on different threads, so a
// run that ends without being held is tried again.
func heldWhilePruned(t *testing.T, dir, set, path, inject string, sysno int, args ...string) (int, string) {
	t.Helper()
	call, _, _ := strings.Cut(inject, ":")
	for try := 1; ; try++ {
		cmd := exec.Command("strace", append([]string{"-f", "-qq", "-o", os.DevNull, "-P", path,
			"-e", "trace=" + call, "-e", "inject=" + inject, binary}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })
		if !heldOrDone(t, args[0]+" held after reading LATEST", inSyscall(cmd, sysno), done) {
			if try == 5 {
				t.Fatalf("%s was never held after reading LATEST in %d runs:\n%s", args[0], try, out.String())
			}
			continue
		}
		time.Sleep(1100 * time.Millisecond)
		makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "b\n"}})
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
		<-done
		return cmd.ProcessState.ExitCode(), out.String()
	}
}

// heldOrDone waits until held says so (true) or done is closed (false).
func heldOrDone(t *testing.T, what string, held func() bool, done <-chan struct{}) bool {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !held(); time.Sleep(5 * time.Millisecond) {
		select {
		case <-done:
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	return true
}

// runAs runs the binary as uid:gid with the supplementary groups given (none when nil), in
// dir.
func runAs(t *testing.T, dir string, uid, gid int, groups []uint32, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: uint32(uid), Gid: uint32(gid), Groups: groups, NoSetGroups: false}}
	if groups == nil {
		cmd.SysProcAttr.Credential.Groups = []uint32{}
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running backup %v: %v", args, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// TestAttackRootRunLocksOwnerOutOfSet: a set folder owned by a service user (here nobody,
// mode 0755), backed up by that user's timer. An admin runs the same backup once as root
// (sudo, to test it, or a root cron job before the service was moved to its own user). The
// root run creates .backup.lock owned by root, mode 0600 (lockMode of a 0755 folder). From
// then on the service user, who owns the set's folder and every archive in it, cannot open
// the lock file for writing: every run of its timer exits 1 "lock …: permission denied",
// and backups stop until someone notices and deletes the file by hand. Before the fix the
// 0644 file opened read-only served both users.
// Correct: the user who owns (may write) the set's folder can always lock its set: a lock
// file it cannot open for writing but may remove (its own folder) is replaced, or root's
// run gives the lock file to the folder's owner.
func TestAttackRootRunLocksOwnerOutOfSet(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(set, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	// The service user's first backup: fine.
	mustExit(t, backup(t, runOpts{dir: dir, uid: nobody}, "create", "--output-dir", set, "app"), exitComplete)
	// The service's lock file is nobody's, 0600: root's run does not chmod it. Root's run
	// with no lock file (as on a fresh set, or after a cleanup) creates one of its own.
	os.Remove(filepath.Join(set, ".backup.lock"))
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	if fi, err := os.Stat(filepath.Join(set, ".backup.lock")); err == nil {
		t.Logf("lock file after root's run: %v uid %d", fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "--output-dir", set, "app")
	if r.code == exitFailed && strings.Contains(r.stderr, "lock") {
		t.Errorf("the owner of the set's folder can no longer back it up after one run as root: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAttackGroupSetLocksOtherMembersOut: a set folder shared by a group (0770,
// root:backup, without the setgid bit), backed up by two users of that group (two
// services, or two admins taking turns). The docs promise the lock file is 0660 "in a 0775
// one": it is, but its group is the group of the user who created it (alice's own group),
// not the folder's, so bob, who may write the set, cannot open it for writing: every run of
// bob's exits 1 "lock …: permission denied" from then on. Before the fix the 0644 file
// opened read-only served both.
// Correct: everyone who may write the set's folder can lock it (the lock file's group is
// the folder's, or a lock file one may not open but may remove is replaced).
func TestAttackGroupSetLocksOtherMembersOut(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	const alice, bob, group = 41001, 41002, 42000
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(set, 0, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(set, 0o770); err != nil {
		t.Fatal(err)
	}
	r := runAs(t, dir, alice, alice, []uint32{group}, "create", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if fi, err := os.Stat(filepath.Join(set, ".backup.lock")); err == nil {
		st := fi.Sys().(*syscall.Stat_t)
		t.Logf("lock file after alice's run: %v %d:%d", fi.Mode(), st.Uid, st.Gid)
	}
	r = runAs(t, dir, bob, bob, []uint32{group}, "create", "--output-dir", set, "app")
	if r.code == exitFailed && strings.Contains(r.stderr, "lock") {
		t.Errorf("a member of the set's group, who may write the set, cannot lock it: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAttackDryRunNeedsWriteAccess: `prune --dry-run` ("print what would be deleted;
// delete nothing") and `activate --dry-run` ("check and verify ARCHIVE and say what would
// change; change nothing") are what an auditor, a monitoring check or an admin without
// write access runs to see what a retention policy would do, or whether a backup would be
// accepted as LATEST. Since the lock file is opened read-write only, any user who may read
// the set but not write it gets exit 1 "lock …: permission denied" from both, though
// neither writes anything; before the fix they ran (the lock file was opened read-only when
// it could not be opened for writing).
// Correct: a dry run that changes nothing does not need the writer's lock (or takes it
// only when it can): a reader of the set gets its plan and its check.
func TestAttackDryRunNeedsWriteAccess(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	// The set is readable by all (an auditor, a monitoring user), writable by root only.
	if err := os.Chmod(set, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(set, "app-*"))
	for _, f := range files {
		os.Chmod(f, 0o644)
	}
	r := backup(t, runOpts{dir: dir, uid: nobody}, "prune", "--dry-run", "--keep-last", "1", set)
	if r.code != exitComplete {
		t.Errorf("prune --dry-run by a reader of the set exits %d\n%s", r.code, r.stderr)
	}
	r = backup(t, runOpts{dir: dir, uid: nobody}, "activate", "--dry-run", set, readLatest(t, set))
	if r.code != exitComplete {
		t.Errorf("activate --dry-run by a reader of the set exits %d\n%s", r.code, r.stderr)
	}
}

// TestAttackDryRunOnReadOnlyMount: the same as root, on a set mounted read-only (a
// backup disk mounted ro to look at it, a snapshot, a replica): prune --dry-run and
// activate --dry-run exit 1 "lock …: read-only file system", though they write nothing
// (not new today: the version before the fix fell back to a read-only open only on
// EACCES; today's fix makes every open read-write, with no fallback at all).
// Correct: a dry run of a set it cannot write still says what it would do.
func TestAttackDryRunOnReadOnlyMount(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(set, ro, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(ro, syscall.MNT_DETACH) })
	if err := syscall.Mount("", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "prune", "--dry-run", "--keep-last", "1", ro)
	if r.code != exitComplete {
		t.Errorf("prune --dry-run of a set mounted read-only exits %d\n%s", r.code, r.stderr)
	}
	r = backup(t, runOpts{dir: dir}, "activate", "--dry-run", ro, readLatest(t, ro))
	if r.code != exitComplete {
		t.Errorf("activate --dry-run of a set mounted read-only exits %d\n%s", r.code, r.stderr)
	}
}

// TestAttackDryRunCreatesLockFile: prune --dry-run and activate --dry-run "write nothing",
// but take the set's lock, creating .backup.lock in a folder that has none: a mistyped DIR,
// an attic, a set copied without its dot files. The folder is then a set to backup sets
// (health "missing", exit 1: the fleet check alerts) and no longer takes --attic.
// Correct: a dry run of a folder without a lock file writes nothing; it reads the folder
// without the lock, as it reads a set it cannot lock (no run holds a lock it never made).
func TestAttackDryRunCreatesLockFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "notes")
	makeTree(t, plain, map[string]node{"notes.txt": {content: "x"}})
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	// The set is then copied without its dot files, by the loop below.
	for _, args := range [][]string{
		{"prune", "--dry-run", "--keep-last", "1", plain},
		{"prune", "--dry-run", "--keep-last", "1", set},
		{"activate", "--dry-run", set, readLatest(t, set)},
	} {
		folder := args[len(args)-1]
		if args[0] == "activate" {
			folder = args[2]
		}
		os.Remove(filepath.Join(folder, ".backup.lock"))
		before := leftovers(t, folder)
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitComplete)
		if after := leftovers(t, folder); !slices.Equal(after, before) {
			t.Errorf("%v wrote into %s: %v (was %v)", args, folder, after, before)
		}
	}
}

// TestAttackPruneMakesFolderASet: prune (not a dry run) of a folder that is no set (the
// parent of the sets, mistyped: backup prune --keep-last 3 /backups) finds nothing to
// prune, exit 0, but takes the lock first and so leaves .backup.lock there: backup sets of
// the fleet then counts the folder as a set with no backup (health missing) and fails,
// exit 1, on every run after.
// Correct: a folder that holds no lock file, no LATEST and no run is left as it was.
func TestAttackPruneMakesFolderASet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet := filepath.Join(dir, "backups")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(fleet, "web1"), "app"), exitComplete)
	mustExit(t, backup(t, runOpts{}, "prune", "--keep-last", "3", fleet), exitComplete)
	if left := leftovers(t, fleet, "web1"); len(left) > 0 {
		t.Errorf("prune of a folder that is no set left %v in it", left)
	}
	r := backup(t, runOpts{}, "sets", fleet)
	mustExit(t, r, exitComplete)
}

// TestAttackActivateMakesFolderASet: activate (not a dry run) of a folder that is no set (a
// mistyped DIR, the parent of the sets) refuses, exit 1, the archive missing, but takes the
// lock first and so leaves .backup.lock there: backup sets of the fleet then counts the
// folder as a set with no backup (health missing) and fails, exit 1, on every run after.
// Correct: a folder that holds no lock file, no LATEST and no run is left as it was, and the
// refusal says the folder holds no set.
func TestAttackActivateMakesFolderASet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fleet := filepath.Join(dir, "backups")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(fleet, "web1"), "app"), exitComplete)
	r := backup(t, runOpts{}, "activate", fleet, "app-20261130T030000Z.zip")
	mustExit(t, r, exitFailed)
	if want := "backup activate: not activating app-20261130T030000Z.zip: " + fleet + " holds no backup set (no LATEST, no lock file, no backup)\n"; r.stderr != want {
		t.Errorf("activate of a folder that is no set says:\n%s\nwant:\n%s", r.stderr, want)
	}
	if left := leftovers(t, fleet, "web1"); len(left) > 0 {
		t.Errorf("activate of a folder that is no set left %v in it", left)
	}
	mustExit(t, backup(t, runOpts{}, "sets", fleet), exitComplete)
}
