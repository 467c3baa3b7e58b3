package main

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests of backup sets: create --output-dir DIR with its lock and LATEST, and
// backup status and prune on real sets.

// setArchives lists the archives and receipts in a set folder, oldest first: by the time in
// the name, then by the -2, -3… that numbers the runs of one second (the name without one
// came first), each archive before its receipt.
func setArchives(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "app-2*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ka, kb := setOrder(a), setOrder(b)
		return cmp.Or(cmp.Compare(ka.stamp, kb.stamp), cmp.Compare(ka.run, kb.run), cmp.Compare(ka.receipt, kb.receipt))
	})
	return names
}

// setKey is what orders the files of a set: app-STAMP[-RUN].zip[.receipt.json].
type setKey struct {
	stamp   string
	run     int
	receipt int
}

func setOrder(name string) setKey {
	k := setKey{run: 1}
	base, isReceipt := strings.CutSuffix(name, ".receipt.json")
	if isReceipt {
		k.receipt = 1
	}
	base = strings.TrimSuffix(base, ".zip")
	k.stamp = base
	if i := strings.LastIndex(base, "-"); i > 0 && strings.HasSuffix(base[:i], "Z") {
		if n, err := strconv.Atoi(base[i+1:]); err == nil {
			k.stamp, k.run = base[:i], n
		}
	}
	return k
}

func readLatest(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

func mustExit(t *testing.T, r result, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, want, r.stderr)
	}
}

// TestSetConcurrentCreates starts two runs on one set at the same moment: one backs up, the
// other exits 4 at once naming the first's pid and writes nothing. With --wait both succeed,
// one after the other.
func TestSetConcurrentCreates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Slow enough (level 9 on random hex, one job) that the first run still holds the lock
	// when the second starts.
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: slowString(t, 4<<20)}})
	set := filepath.Join(dir, "set")

	runs := startTogether(t, dir, "create", "--level", "9", "-j", "1", "--output-dir", set, "app")
	var winner, loser *exec.Cmd
	for i, cmd := range runs {
		if cmd.ProcessState.ExitCode() == exitLocked {
			loser, winner = cmd, runs[1-i]
		}
	}
	if loser == nil || winner.ProcessState.ExitCode() != exitComplete {
		t.Fatalf("exit codes %d and %d, want one %d and one %d", runs[0].ProcessState.ExitCode(), runs[1].ProcessState.ExitCode(), exitComplete, exitLocked)
	}
	want := "backup: " + set + ": another backup of this set is running, pid " + strconv.Itoa(winner.Process.Pid) + "\n"
	if got := loser.Stderr.(*strings.Builder).String(); got != want {
		t.Errorf("the locked run said %q, want %q", got, want)
	}
	if loser.Stdout.(*strings.Builder).Len() != 0 {
		t.Errorf("the locked run printed to stdout")
	}
	archives := setArchives(t, set)
	if len(archives) != 2 || archives[1] != archives[0]+".receipt.json" {
		t.Fatalf("set holds %v, want one archive and its receipt", archives)
	}
	if extra := leftovers(t, set, archives[0], archives[1], "LATEST", ".backup.lock"); len(extra) > 0 {
		t.Errorf("left behind: %v", extra)
	}
	if got := readLatest(t, set); got != archives[0] {
		t.Errorf("LATEST %q, want %q", got, archives[0])
	}

	runs = startTogether(t, dir, "create", "--level", "9", "-j", "1", "--wait", "2m", "--output-dir", set, "app")
	for _, cmd := range runs {
		if code := cmd.ProcessState.ExitCode(); code != exitComplete {
			t.Errorf("with --wait: exit %d, stderr %s", code, cmd.Stderr)
		}
	}
	archives = setArchives(t, set)
	if len(archives) != 6 {
		t.Fatalf("set holds %v, want three archives and their receipts", archives)
	}
	if got := readLatest(t, set); got != archives[4] {
		t.Errorf("LATEST %q, want the newest, %q", got, archives[4])
	}
	for _, name := range archives {
		if strings.HasSuffix(name, ".zip") {
			readZip(t, filepath.Join(set, name))
		}
	}
}

// startTogether starts two runs of the binary with the same arguments and waits for both.
func startTogether(t *testing.T, dir string, args ...string) []*exec.Cmd {
	t.Helper()
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(binary, args...)
		cmds[i].Dir = dir
		cmds[i].Stdout, cmds[i].Stderr = &strings.Builder{}, &strings.Builder{}
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		cmd.Wait()
	}
	return cmds
}

// TestSetKilledRun kills (SIGKILL) a run while it holds the set's lock and writes its
// archive: LATEST stays on the previous good backup, status still finds it healthy, the
// kernel has dropped the lock, and the next run is fine. (The kill between the archive
// being in place and LATEST moving is TestActivateKilled in backupset.)
func TestSetKilledRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	good := readLatest(t, set)

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: slowString(t, 32<<20)}})
	cmd := exec.Command(binary, "create", "--level", "9", "-j", "1", "--output-dir", set, "app")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitFor(t, "the run's temp file", func() bool {
		temps, _ := filepath.Glob(filepath.Join(set, ".app-*.zip.tmp-*"))
		return len(temps) > 0
	})
	cmd.Process.Kill()
	cmd.Wait()
	if got := readLatest(t, set); got != good {
		t.Errorf("after the kill LATEST names %q, want %q", got, good)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "--max-age", "1h", set), exitComplete)

	os.Remove(filepath.Join(dir, "app", "random"))
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "1", "app")
	mustExit(t, r, exitComplete)
	if temps, _ := filepath.Glob(filepath.Join(set, ".app-*.zip.tmp-*")); len(temps) > 0 {
		t.Errorf("the next run, holding the lock, left the killed run's temp files: %v", temps)
	}
	archives := setArchives(t, set)
	if len(archives) != 2 || readLatest(t, set) != archives[0] || archives[0] == good {
		t.Errorf("after the next run: %v, LATEST %q; want only the new archive", archives, readLatest(t, set))
	}
}

// TestSetIncompleteRun runs the binary as nobody: a complete run moves LATEST; a run that
// cannot read a file does not move it and prunes nothing, even with --keep-last 1; with
// --activate-incomplete it moves LATEST, and still prunes nothing.
func TestSetIncompleteRun(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"ok.txt": {content: "ok\n"}, "secret": {content: "s\n"}})
	set := filepath.Join(dir, "set")
	makeTree(t, set, map[string]node{".": {kind: "dir", mode: 0o777}})
	as := runOpts{dir: dir, uid: nobody}
	mustExit(t, backup(t, as, "create", "--output-dir", set, "--keep-last", "1", "app"), exitComplete)
	good := readLatest(t, set)

	if err := os.Chmod(filepath.Join(dir, "app", "secret"), 0o200); err != nil {
		t.Fatal(err)
	}
	r := backup(t, as, "create", "--output-dir", set, "--keep-last", "1", "app")
	mustExit(t, r, exitIncomplete)
	if !strings.Contains(r.stderr, "backup: LATEST not moved: the backup is incomplete") {
		t.Errorf("stderr does not say LATEST stayed:\n%s", r.stderr)
	}
	if got := readLatest(t, set); got != good {
		t.Errorf("LATEST %q, want %q", got, good)
	}
	if archives := setArchives(t, set); len(archives) != 4 {
		t.Errorf("set holds %v, want both runs (nothing pruned)", archives)
	}
	r = backup(t, as, "status", "--max-age", "1h", set)
	if r.code != exitComplete || !strings.Contains(r.stdout, "incomplete") {
		t.Errorf("status: exit %d, stdout %q; want healthy (LATEST is the complete run), listing the incomplete one", r.code, r.stdout)
	}

	// Exit 3 stays "incomplete" with --activate-incomplete (README: it then means LATEST
	// moved to the incomplete backup); stderr says the move.
	r = backup(t, as, "create", "-q", "--output-dir", set, "--keep-last", "1", "--activate-incomplete", "app")
	mustExit(t, r, exitIncomplete)
	archives := setArchives(t, set)
	if !strings.Contains(r.stderr, "backup: LATEST -> "+archives[4]) {
		t.Errorf("exit 3 with --activate-incomplete does not say LATEST moved:\n%s", r.stderr)
	}
	if len(archives) != 6 || readLatest(t, set) != archives[4] {
		t.Errorf("set holds %v, LATEST %q; want three runs, LATEST on the newest", archives, readLatest(t, set))
	}
	r = backup(t, as, "status", "--max-age", "1h", set)
	if r.code != exitFailed || !strings.Contains(r.stderr, archives[4]+" is incomplete") {
		t.Errorf("status with an incomplete LATEST: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSetSharedLockFile: a set whose lock file another user created can still be locked
// (flock needs no write access), here by nobody after root.
func TestSetSharedLockFile(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	makeTree(t, set, map[string]node{".": {kind: "dir", mode: 0o777}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir, uid: nobody}, "create", "--output-dir", set, "app"), exitComplete)
	if archives := setArchives(t, set); len(archives) != 4 || readLatest(t, set) != archives[2] {
		t.Errorf("set holds %v, LATEST %q; want nobody's run to be LATEST", archives, readLatest(t, set))
	}
}

// TestSetCreatePrunes: --keep-last on create prunes after each good run; files that are not
// the set's survive.
func TestSetCreatePrunes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	foreign := []string{"notes.txt", "app.zip", "app-latest.zip"}
	for _, name := range foreign {
		makeTree(t, set, map[string]node{name: {content: "mine"}})
	}
	// The runs mostly start within one second: prune frees the first names of that second,
	// and a later run must number past those still taken, not take a freed name again.
	for range 4 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--keep-last", "2", "app"), exitComplete)
	}
	archives := setArchives(t, set)
	if len(archives) != 4 || readLatest(t, set) != archives[2] {
		t.Errorf("set holds %v, LATEST %q; want the two newest", archives, readLatest(t, set))
	}
	for _, name := range foreign {
		assertContent(t, filepath.Join(set, name), "mine")
	}
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--keep-last", "2", "app")
	if !strings.Contains(r.stderr, "deleted "+archives[0]+" (complete, not kept by any rule)") ||
		!strings.Contains(r.stderr, "backup: pruned 1, kept 2") {
		t.Errorf("create did not report what it pruned:\n%s", r.stderr)
	}
}

// TestSetOneSource: a set holds the backups of one source; another is refused before
// anything is written.
func TestSetOneSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a": {}, "db/d": {}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	before := setArchives(t, set)
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "db")
	if r.code != exitFailed || !strings.Contains(r.stderr, `is the backup set of "app"`) {
		t.Errorf("exit %d, stderr %q; want %d and a refusal", r.code, r.stderr, exitFailed)
	}
	if extra := leftovers(t, set, append(before, "LATEST", ".backup.lock")...); len(extra) > 0 {
		t.Errorf("the refused run wrote %v", extra)
	}
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
