package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backup/backupset"
	"backup/format"
)

// pings is a local HTTP listener standing in for a healthchecks.io-style service: it
// records each request's path and query.
type pings struct {
	mu  sync.Mutex
	got []string
	srv *httptest.Server
}

func newPings(t *testing.T) *pings {
	p := &pings{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, r.URL.RequestURI())
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pings) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// pingHook is a curl ping like the one docs/operations.md (Hooks) shows, to the test's listener.
func (p *pings) pingHook() string {
	return `curl -fsS -m 10 "` + p.srv.URL + `/$BACKUP_STATUS?code=$BACKUP_EXIT_CODE&set=$BACKUP_SET" >/dev/null`
}

// TestExecAfter runs the curl ping after every outcome of create, and checks that a
// failing hook is recorded in the receipt but changes nothing else.
func TestExecAfter(t *testing.T) {
	mustTool(t, "curl")
	p := newPings(t)
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})

	r := backup(t, runOpts{}, "create", "-q", "--output-dir", set, "--exec-after", p.pingHook(),
		"--exec-after", "exit 7", "--exec-after", `test -s "$BACKUP_ARCHIVE" && test -s "$BACKUP_RECEIPT"`, src)
	if r.code != 0 {
		t.Fatalf("complete run with a failing hook: exit %d, want 0: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `backup: --exec-after "exit 7": exit status 7`) {
		t.Errorf("stderr does not warn of the failed hook: %q", r.stderr)
	}
	receipts, _ := filepath.Glob(filepath.Join(set, "*.receipt.json"))
	if len(receipts) != 1 {
		t.Fatalf("receipts %v, want one", receipts)
	}
	rc := readReceipt(t, receipts[0])
	if len(rc.Hooks) != 3 || rc.Hooks[0].ExitCode != 0 || rc.Hooks[1].ExitCode != 7 || rc.Hooks[1].When != "after" || rc.Hooks[2].ExitCode != 0 {
		t.Errorf("receipt hooks %+v; want 3 after hooks, exit codes 0, 7, 0", rc.Hooks)
	}
	if rc.Status != "complete" {
		t.Errorf("receipt status %q, want complete", rc.Status)
	}

	os.RemoveAll(src)
	r = backup(t, runOpts{}, "create", "-q", "--output-dir", set, "--exec-after", p.pingHook(), src)
	if r.code != exitFailed {
		t.Fatalf("run without its source: exit %d, want 1: %s", r.code, r.stderr)
	}
	want := []string{"/complete?code=0&set=" + set, "/failed?code=1&set=" + set}
	if got := p.list(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pings %q, want %q", got, want)
	}
}

// TestExecBefore: a before hook that fails fails the run with nothing written; the after
// hooks still report it. One that succeeds runs first, and the backup sees what it wrote.
func TestExecBefore(t *testing.T) {
	mustTool(t, "curl")
	p := newPings(t)
	dir := t.TempDir()
	src, out := filepath.Join(dir, "app"), filepath.Join(dir, "out")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})

	r := backup(t, runOpts{}, "create", "--output-dir", out, "--exec-before", "exit 3", "--exec-after", p.pingHook(), src)
	if r.code != exitFailed || !strings.Contains(r.stderr, `backup: failed: --exec-before "exit 3": exit status 3`) {
		t.Errorf("failing before hook: exit %d, stderr %q; want 1 and the hook named", r.code, r.stderr)
	}
	// The set's folder and its lock file are made before the hooks run, under the lock.
	if names := listDir(t, out); len(names) != 1 || names[0] != ".backup.lock" {
		t.Errorf("failing before hook: %s holds %v, want the lock file alone", out, names)
	}
	if got := p.list(); len(got) != 1 || !strings.HasPrefix(got[0], "/failed?code=1") {
		t.Errorf("pings %q, want one /failed?code=1", got)
	}

	dump := `echo dumped > "` + filepath.Join(src, "db.sql") + `"`
	r = backup(t, runOpts{}, "create", "-q", "-o", filepath.Join(dir, "a.zip"), "--exec-before", dump, src)
	if r.code != 0 {
		t.Fatalf("before hook that dumps: exit %d: %s", r.code, r.stderr)
	}
	if got := readZip(t, filepath.Join(dir, "a.zip"))["app/db.sql"]; got != "dumped\n" {
		t.Errorf("app/db.sql = %q, want the dump", got)
	}
	if rc := readReceipt(t, filepath.Join(dir, "a.zip.receipt.json")); len(rc.Hooks) != 1 || rc.Hooks[0].When != "before" {
		t.Errorf("receipt hooks %+v, want the before hook", rc.Hooks)
	}
}

// TestExecTimeout: a hook that outlives --exec-timeout is killed, with what it started, and
// recorded as such; the run's exit code stays 0.
func TestExecTimeout(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})
	r := backup(t, runOpts{}, "create", "-q", "-o", filepath.Join(dir, "a.zip"), "--exec-timeout", "1s", "--exec-after", "sleep 60; true", src)
	if r.code != 0 || !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("exit %d, stderr %q; want 0 and the timeout", r.code, r.stderr)
	}
	if rc := readReceipt(t, filepath.Join(dir, "a.zip.receipt.json")); len(rc.Hooks) != 1 || rc.Hooks[0].ExitCode != -1 {
		t.Errorf("receipt hooks %+v, want one with exit code -1", rc.Hooks)
	}
}

// TestPruneHooks: prune runs its hooks too, with BACKUP_COMMAND=prune.
func TestPruneHooks(t *testing.T) {
	dir := t.TempDir()
	src, set, log := filepath.Join(dir, "app"), filepath.Join(dir, "set"), filepath.Join(dir, "log")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})
	if r := backup(t, runOpts{}, "create", "-q", "--output-dir", set, src); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	hook := `echo "$BACKUP_COMMAND $BACKUP_STATUS $BACKUP_EXIT_CODE" >> ` + log
	r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--exec-before", "echo before >> "+log, "--exec-after", hook, set)
	if r.code != 0 {
		t.Fatalf("prune: exit %d: %s", r.code, r.stderr)
	}
	r = backup(t, runOpts{}, "prune", "--keep-last", "1", "--exec-before", "false", "--exec-after", hook, set)
	if r.code != exitFailed {
		t.Errorf("prune with a failing before hook: exit %d, want 1", r.code)
	}
	data, _ := os.ReadFile(log)
	if got, want := string(data), "before\nprune complete 0\nprune failed 1\n"; got != want {
		t.Errorf("hook log %q, want %q", got, want)
	}
}

// TestInterruptedRunReports: a run stopped by SIGINT still writes its metrics (failed, exit
// code 130) and runs its after hooks with BACKUP_STATUS=interrupted, and exits 130.
func TestInterruptedRunReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: slowString(t, 64<<20)}})
	out, prom, log := filepath.Join(dir, "out"), filepath.Join(dir, "b.prom"), filepath.Join(dir, "log")
	makeTree(t, out, map[string]node{".": {kind: "dir"}})
	cmd := exec.Command(binary, "create", "--level", "9", "-j", "1", "-o", filepath.Join(out, "app.zip"),
		"--metrics-file", prom, "--exec-after", `echo "$BACKUP_STATUS $BACKUP_EXIT_CODE" > `+log, "app")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitForTemp(t, out)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	if data, _ := os.ReadFile(log); string(data) != "interrupted 130\n" {
		t.Errorf("after hook saw %q, want \"interrupted 130\"", data)
	}
	label := `{set="` + out + `"}`
	if got := metricValue(t, prom, `backup_last_status{set="`+out+`",status="failed"}`); got != 1 {
		t.Errorf("metrics: failed = %v, want 1", got)
	}
	if got := metricValue(t, prom, "backup_last_exit_code"+label); got != exitInterrupted {
		t.Errorf("metrics: exit code %v, want 130", got)
	}
}

// TestExecAfterStdoutArchive: with -o -, the after hooks get the receipt the run wrote to
// --receipt as BACKUP_RECEIPT, and that receipt records them, as for any other run.
func TestExecAfterStdoutArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	receipt := filepath.Join(dir, "r.json")
	seen := filepath.Join(dir, "seen")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "-", "--receipt", receipt,
		"--exec-after", `printf %s "$BACKUP_RECEIPT" > `+seen, "app")
	mustExit(t, r, exitComplete)
	if got := string(readFile(t, seen)); got != receipt {
		t.Errorf("BACKUP_RECEIPT %q, want %q", got, receipt)
	}
	if rc := readReceipt(t, receipt); len(rc.Hooks) != 1 || rc.Hooks[0].When != "after" {
		t.Errorf("receipt hooks %+v, want the after hook", rc.Hooks)
	}
}

// TestExecAfterFailedRunKeepsOthersReceipt: a --force run that fails leaves the archive at
// -o and its receipt alone, and the --exec-after hooks are told it wrote no receipt. Before,
// the run took the receipt it had left alone for its own: the hooks got the old archive's
// receipt as BACKUP_RECEIPT, and adding them to it replaced that receipt with the failed
// run's, so the archive no longer verified against its receipt.
func TestExecAfterFailedRunKeepsOthersReceipt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	before := readFile(t, filepath.Join(dir, "a.zip.receipt.json"))
	seen := filepath.Join(dir, "seen")
	r := backup(t, runOpts{dir: dir}, "create", "--force", "-o", "a.zip",
		"--exec-after", `printf %s "$BACKUP_RECEIPT" > `+seen, "gone")
	mustExit(t, r, exitFailed)
	if got := string(readFile(t, seen)); got != "" {
		t.Errorf("BACKUP_RECEIPT %q, want none: the failed run wrote no receipt", got)
	}
	if after := readFile(t, filepath.Join(dir, "a.zip.receipt.json")); !bytes.Equal(after, before) {
		t.Errorf("the receipt of the archive at -o changed:\n%s", after)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "a.zip"), exitComplete)
}

// TestAttackDryRunRunsHooks: create --dry-run ("write nothing") runs the --exec-before
// hook, the database dump the docs show, without the set's lock, which a dry run never
// takes: beside a real run that holds the set (here the test holds its lock), the dry run's
// dump truncates the dump that run is archiving. Its --exec-after hook then reports
// BACKUP_STATUS complete, exit code 0, to the dead man's switch, for a backup never made.
// prune --dry-run does the same.
// Correct: a dry run runs no hook.
func TestAttackDryRunRunsHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, src), exitComplete)
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: set}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	marks := filepath.Join(dir, "marks")
	hook := func(what string) string { return `echo "` + what + ` $BACKUP_STATUS $BACKUP_EXIT_CODE" >>` + marks }
	for _, args := range [][]string{
		{"create", "--dry-run", "--output-dir", set, src},
		{"create", "--dry-run", src},
		{"prune", "--dry-run", "--keep-last", "1", set},
	} {
		r := backup(t, runOpts{dir: dir}, append(args, "--exec-before", hook("before"), "--exec-after", hook("after"))...)
		data, _ := os.ReadFile(marks)
		if len(data) > 0 {
			t.Errorf("%v: exit %d; the hooks ran:\n%s", args, r.code, data)
		}
		os.Remove(marks)
	}
}

// TestAttackExcludeFromReadBeforeHook: the docs say the before hooks run "before anything
// else", and the SOURCE is only looked at after them (a hook may make or mount it), but an
// --exclude-from file is read when the flags are checked, before the hooks: a hook that
// writes the list (the big files of the day, the volumes to leave out, as borgmatic's
// before_backup hooks do) has no effect on the run, which goes by the list the last run's
// hook left. Here the list said "old" and the hook wrote "big": app/big is archived.
// Correct: the run goes by the list as the before hooks left it.
func TestAttackExcludeFromReadBeforeHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/big": {content: "big"}, "app/f": {content: "f"}, "ex": {content: "old\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "--exclude-from", "ex", "--exec-before", "echo big >ex", "app")
	mustExit(t, r, exitComplete)
	rc := readReceipt(t, filepath.Join(dir, "a.zip.receipt.json"))
	if len(rc.Excluded) != 1 || rc.Excluded[0].Path != "app/big" || rc.Excluded[0].Rule != "big" {
		t.Errorf("excluded %+v; want app/big by the rule big, which the before hook wrote", rc.Excluded)
	}
}

// TestAttackExecTimeoutOverflow: a timeout meant as "never" (--exec-timeout 300000d, past
// the 292 years a time.Duration holds) is parsed into a negative duration: each hook times
// out before it starts, and saying so ("timed out after …") recurses for ever in
// FormatDuration (-d of the most negative duration is itself): the run dies of a stack
// overflow, exit 2 and a goroutine dump, its backup not made. Durations summed past the
// limit wrap around instead: --keep-within 106751d106751d2d keeps 25 minutes, and prune
// deletes the rest.
// Correct: a duration too long to hold is a usage error, as any bad duration is.
func TestAttackExecTimeoutOverflow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "f"}})
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--exec-timeout", "300000d", "--exec-before", "true", "app"},
		{"create", "-o", "b.zip", "--exec-timeout", "106751d106751d2d", "--exec-before", "true", "app"},
		{"prune", "--keep-within", "106751d106751d2d", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, "backup "+args[0]+": invalid argument") || strings.Count(r.stderr, "\n") > 2 {
			t.Errorf("%v: exit %d, stderr (%d bytes) %.300q; want a usage error", args, r.code, len(r.stderr), r.stderr)
		}
	}
}

// TestAttackPruneHookErrorEmpty: create's after hooks learn why a run failed from
// BACKUP_ERROR (a locked set: "… another backup of this set is running, pid N"), but
// prune's get it empty in every outcome: locked (exit 4), a damaged LATEST (exit 1), a
// failed before hook. What --json's "error" says, the hook that mails the failure never
// learns.
// Correct: prune's after hooks get the cause its --json prints.
func TestAttackPruneHookErrorEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	r := simulatedRun{started: time.Now().Add(-time.Hour), status: format.Complete}
	writeSimulated(t, set, r)
	log := filepath.Join(dir, "log")
	hook := `echo "$BACKUP_STATUS: $BACKUP_ERROR" >` + log
	makeTree(t, set, map[string]node{"LATEST": {content: "junk\n"}})
	mustExit(t, backup(t, runOpts{}, "prune", "--keep-last", "1", "--exec-after", hook, set), exitFailed)
	if data, _ := os.ReadFile(log); !strings.Contains(string(data), "failed: not pruning: "+filepath.Join(set, "LATEST")) {
		t.Errorf("a damaged LATEST: the after hook saw %q", data)
	}
	makeTree(t, set, map[string]node{"LATEST": {content: r.name() + "\n"}})
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: set}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	mustExit(t, backup(t, runOpts{}, "prune", "--keep-last", "1", "--exec-after", hook, set), exitLocked)
	if data, _ := os.ReadFile(log); !strings.Contains(string(data), "locked: "+set+": another backup of this set is running") {
		t.Errorf("a locked set: the after hook saw %q", data)
	}
}

// TestAttackCreateHookErrorEmptyAfterPrune: a complete run whose prune then fails (EIO on
// the unlink of the oldest archive) exits 1, and its after hooks get BACKUP_STATUS failed
// with BACKUP_ERROR empty (the receipt, complete, has no error): the hook that mails the
// failure cannot say what failed, where prune's own hooks now can.
// Correct: BACKUP_ERROR says why the run exits 1 (the prune's error).
func TestAttackCreateHookErrorEmptyAfterPrune(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	set, log := filepath.Join(dir, "set"), filepath.Join(dir, "log")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	oldest := filepath.Join(set, setArchives(t, set)[0])
	r := straceRun(t, dir, oldest, "unlinkat", "unlinkat:error=EIO", "create", "-q", "--output-dir", set,
		"--keep-last", "1", "--exec-after", `echo "$BACKUP_STATUS: $BACKUP_ERROR" >`+log, "app")
	mustExit(t, r, exitFailed)
	if data, _ := os.ReadFile(log); !strings.Contains(string(data), "failed: prune: ") || !strings.Contains(string(data), "input/output error") {
		t.Errorf("the after hook saw %q; want the prune's error", data)
	}
}

// TestAttackExecTimeoutZero: --exec-timeout 0s (or 0m, 0d; a bare 0 is no duration) was
// taken, and every hook then timed out before it began: a create whose --exec-before is
// `true` failed ("timed out after 0s"), exit 1. No hook can run in no time: a usage error,
// as --max-age 0s is.
func TestAttackExecTimeoutZero(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "f"}})
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--exec-timeout", "0s", "--exec-before", "true", "app"},
		{"prune", "--keep-last", "1", "--exec-timeout", "0d", "--exec-after", "true", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--exec-timeout") || strings.Count(r.stderr, "\n") > 2 {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming --exec-timeout", args, r.code, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "a.zip")); err == nil {
		t.Error("a.zip was written")
	}
}

// TestAttackSecondSignalLeavesAfterHookRunning: a second SIGINT while an after hook runs
// ends backup at once (exit 130), as documented, but the hook's process group, which its
// doc says is killed whole when the run is interrupted, was left running, bound by no
// --exec-timeout any more: a hook that hangs ran for ever, and one that pings a dead man's
// switch did so after backup had exited. Correct: the forced exit kills it first.
func TestAttackSecondSignalLeavesAfterHookRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}})
	pidFile, late := filepath.Join(dir, "hook.pid"), filepath.Join(dir, "late")
	cmd := exec.Command(binary, "create", "-q", "-o", filepath.Join(dir, "app.zip"),
		"--exec-after", `echo $$ > `+pidFile+`; sleep 3; touch `+late, "app")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var pid int
	waitFor(t, "the after hook", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	for range 2 {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	time.Sleep(4 * time.Second)
	if _, err := os.Stat(late); err == nil {
		t.Errorf("the after hook went on after backup exited (exit %d)", cmd.ProcessState.ExitCode())
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}

// TestAttackHookLeavesChildHoldingStderr: a hook that starts a child in the background
// (`sleep 20 &`, a curl that hangs, backgrounded) and exits. The child, in the hook's
// process group, was killed neither when the hook ended nor at --exec-timeout: it ran on
// after backup exited, bound by nothing, holding backup's stderr open, so whoever read it
// (cron mailing the output, `backup … 2>&1 | logger`) waited for it. Correct: what a hook
// leaves running dies with it.
func TestAttackHookLeavesChildHoldingStderr(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"--exec-before", "--exec-after"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello\n"}})
			start := time.Now()
			// backup's stderr is a pipe, read to its end.
			r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "app.zip", "--exec-timeout", "2s", when, "sleep 20 &", "app")
			mustExit(t, r, exitComplete)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("backup's stderr was held open %v by what the hook left running; want it closed when backup exits", took.Round(time.Second))
			}
		})
	}
}
