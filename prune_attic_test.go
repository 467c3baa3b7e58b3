package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestPruneAttic prunes with --attic into a folder on the set's file system (rename) and
// into a tmpfs (copy, verify, delete): the runs not kept leave the set and are in the attic
// byte for byte, archive and receipt, and still verify there; LATEST stays.
func TestPruneAttic(t *testing.T) {
	t.Parallel()
	for _, fsys := range []string{"same", "tmpfs"} {
		t.Run(fsys, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			attic := filepath.Join(dir, "attic")
			if err := os.Mkdir(attic, 0o755); err != nil {
				t.Fatal(err)
			}
			if fsys == "tmpfs" {
				mustRoot(t)
				mountTmpfs(t, attic, "16m")
			}
			set := filepath.Join(dir, "set")
			for _, f := range []string{"a", "b", "c"} {
				makeTree(t, filepath.Join(dir, "app"), map[string]node{f: {content: f + "\n"}})
				mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
			}
			all := setArchives(t, set)
			contents := map[string][]byte{}
			for _, name := range all {
				contents[name] = readFile(t, filepath.Join(set, name))
			}
			latest := readLatest(t, set)

			r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, "--json", set)
			mustExit(t, r, exitComplete)
			var out pruneJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatal(err)
			}
			if out.Moved != 2 || out.Deleted != 0 || out.Attic != attic {
				t.Errorf("prune --json: moved %d, deleted %d, attic %q; want 2, 0, %q", out.Moved, out.Deleted, out.Attic, attic)
			}
			if got := setArchives(t, set); !slices.Equal(got, all[4:]) || readLatest(t, set) != latest {
				t.Errorf("the set holds %v, LATEST %q; want %v, %q", got, readLatest(t, set), all[4:], latest)
			}
			if got := setArchives(t, attic); !slices.Equal(got, all[:4]) {
				t.Errorf("the attic holds %v, want %v", got, all[:4])
			}
			for _, name := range all[:4] {
				if got := readFile(t, filepath.Join(attic, name)); !bytes.Equal(got, contents[name]) {
					t.Errorf("%s differs in the attic", name)
				}
			}
			mustExit(t, backup(t, runOpts{}, "verify", filepath.Join(attic, all[0])), exitComplete)
		})
	}
}

// TestPruneAtticNoReplace: a file of the same name already in the attic is never replaced:
// prune stops (exit 1) and the run stays in the set.
func TestPruneAtticNoReplace(t *testing.T) {
	t.Parallel()
	_, set, a, _ := newestSet(t)
	attic := t.TempDir()
	makeTree(t, attic, map[string]node{a: {content: "an older copy"}})
	r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitFailed)
	if got := string(readFile(t, filepath.Join(attic, a))); got != "an older copy" {
		t.Errorf("the attic's %s was replaced", a)
	}
	if _, err := os.Stat(filepath.Join(set, a)); err != nil {
		t.Errorf("the run that could not be moved left the set: %v", err)
	}
}

// TestPruneAtticFull prunes into an attic on a tmpfs that fills up between an archive and its
// receipt: the pair moves as a unit. The run that did not fit stays whole in the set (its
// archive's copy is taken back out of the attic), the output says what moved, and a later
// prune finds no receipt left alone to delete.
func TestPruneAtticFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	tests := []struct {
		size  string // room in the attic: one page per small file
		moved int    // pairs that fit
	}{
		{"4k", 0},  // the first archive fits, its receipt does not
		{"12k", 1}, // one pair, then the second archive and not its receipt
	}
	for _, tt := range tests {
		t.Run(tt.size, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			attic := filepath.Join(dir, "attic")
			if err := os.Mkdir(attic, 0o755); err != nil {
				t.Fatal(err)
			}
			mountTmpfs(t, attic, tt.size)
			set := filepath.Join(dir, "set")
			for _, f := range []string{"a", "b", "c"} {
				makeTree(t, filepath.Join(dir, "app"), map[string]node{f: {content: f + "\n"}})
				mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
			}
			all := setArchives(t, set)

			r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, set)
			mustExit(t, r, exitFailed)
			if !strings.Contains(r.stderr, "no space left on device") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line with the cause", r.stderr)
			}
			wantLine := fmt.Sprintf("moved to %s %d, then stopped", attic, tt.moved)
			if !strings.Contains(r.stdout, wantLine) {
				t.Errorf("stdout:\n%s\nwant a line %q", r.stdout, wantLine)
			}
			moved := all[:2*tt.moved]
			if got := setArchives(t, attic); !slices.Equal(got, moved) {
				t.Errorf("the attic holds %v, want the pairs that fit: %v", got, moved)
			}
			if got := setArchives(t, set); !slices.Equal(got, all[2*tt.moved:]) {
				t.Errorf("the set holds %v, want %v (the run that did not fit, whole)", got, all[2*tt.moved:])
			}
			r = backup(t, runOpts{}, "status", set)
			if r.code != exitComplete || strings.Contains(r.stdout, "gone") {
				t.Errorf("status after the full attic: exit %d\n%s", r.code, r.stdout)
			}
		})
	}
}

// TestPruneAtticRenameFails: on the set's file system the pair moves by two renames; when the
// receipt's fails (ENOSPC injected), the archive is renamed back: the run stays whole in the
// set and the attic holds nothing of it.
func TestPruneAtticRenameFails(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	_, set, a, b := newestSet(t)
	attic := filepath.Join(filepath.Dir(set), "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	// -P: strace counts calls per thread, and Go may rename from any thread.
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, a+".receipt.json"),
		"-e", "trace=renameat2", "-e", "inject=renameat2:error=ENOSPC", binary, "prune", "--keep-last", "1", "--attic", attic, set)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(string(out), "stays whole in the set") {
		t.Fatalf("exit %d (%v), output:\n%s\nwant %d and that the run stays whole", code, err, out, exitFailed)
	}
	if got := listDir(t, attic); len(got) != 0 {
		t.Errorf("the attic holds %v, want nothing", got)
	}
	if got := setArchives(t, set); !slices.Equal(got, []string{a, a + ".receipt.json", b, b + ".receipt.json"}) {
		t.Errorf("the set holds %v, want both runs whole", got)
	}
}

// TestPruneAtticInterrupted interrupts prune --attic (SIGINT) while it copies a run into an
// attic on another file system (each fsync held by strace): it stops there (exit 130) with
// that run whole in the set and nothing of it in the attic.
func TestPruneAtticInterrupted(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, a, b := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, attic, "1m")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=fsync",
		"-e", "inject=fsync:delay_enter=1000000", binary, "prune", "--keep-last", "1", "--attic", attic, set)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "the copy's temp file", func() bool {
		temps, _ := filepath.Glob(filepath.Join(attic, ".app-*.tmp-*"))
		return len(temps) > 0
	})
	if err := syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || stderr.String() != "backup prune: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), exitInterrupted, "backup prune: interrupted\n")
	}
	if got := setArchives(t, set); !slices.Equal(got, []string{a, a + ".receipt.json", b, b + ".receipt.json"}) {
		t.Errorf("the set holds %v, want both runs whole", got)
	}
	if got := listDir(t, attic); len(got) != 0 {
		t.Errorf("the attic holds %v, want nothing", got)
	}
}

// TestPruneAtticKilled kills prune --attic (SIGKILL) once a run is copied into an attic on
// another file system and before it leaves the set: the next prune --attic completes the
// move without help (the copies already in the attic are the same bytes), instead of
// stopping for ever on "file exists".
func TestPruneAtticKilled(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, a, b := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, attic, "1m")
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, a), "-e", "trace=unlinkat",
		"-e", "inject=unlinkat:delay_enter=60000000", binary, "prune", "--keep-last", "1", "--attic", attic, set)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "the run copied into the attic", func() bool {
		return slices.Contains(listDir(t, attic), a+".receipt.json")
	})
	killGroup(cmd)
	if got := setArchives(t, set); len(got) != 4 {
		t.Fatalf("after the kill the set holds %v, want both runs", got)
	}

	r := backup(t, runOpts{}, "prune", "--wait", "30s", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitComplete)
	if got := setArchives(t, attic); !slices.Equal(got, []string{a, a + ".receipt.json"}) {
		t.Errorf("the attic holds %v, want %s and its receipt", got, a)
	}
	if got := setArchives(t, set); !slices.Equal(got, []string{b, b + ".receipt.json"}) {
		t.Errorf("the set holds %v, want %s and its receipt", got, b)
	}
}

// TestPruneAtticKilledSweepsTemps kills prune --attic (SIGKILL) while it copies a run into an
// attic on another file system: its temp file stays in the attic, and the next prune --attic
// removes it, and only it: a file of the user's with a temp-like name stays.
func TestPruneAtticKilledSweepsTemps(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, a, b := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, attic, "1m")
	users := "." + a + ".tmp-12345"
	makeTree(t, attic, map[string]node{users: {content: "the user's"}})
	// Held where the copy, written and synced, is to be linked into place.
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(attic, a), "-e", "trace=linkat",
		"-e", "inject=linkat:delay_enter=60000000", binary, "prune", "--keep-last", "1", "--attic", attic, set)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	waitFor(t, "the copy linked into place", inSyscall(cmd, unix.SYS_LINKAT))
	killGroup(cmd)
	if temps, _ := filepath.Glob(filepath.Join(attic, ".app-*.tmp-*")); len(temps) != 2 {
		t.Fatalf("the killed run left %v in the attic, want its temp file beside the user's", temps)
	}

	r := backup(t, runOpts{}, "prune", "--wait", "30s", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitComplete)
	if got, want := listDir(t, attic), []string{users, a, a + ".receipt.json"}; !sameSet(got, want) {
		t.Errorf("the attic holds %v, want %v", got, want)
	}
	if got := setArchives(t, set); !slices.Equal(got, []string{b, b + ".receipt.json"}) {
		t.Errorf("the set holds %v, want %s and its receipt", got, b)
	}
}

// sameSet says whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestPruneAtticKeepsWhatItDidNotCopy: an attic shared with another set holds a run of the
// same name whose archive has the same bytes (two sets of one tree, run in the same second)
// and whose receipt differs. Prune counts the archive as copied, cannot copy the receipt,
// and takes back only what it copied itself: the other set's archive stays in the attic
// (before, the take-back removed it, and that run's only copy was lost).
func TestPruneAtticKeepsWhatItDidNotCopy(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, a, b := newestSet(t)
	attic := filepath.Join(dir, "attic")
	if err := os.Mkdir(attic, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, attic, "1m")
	archive := readFile(t, filepath.Join(set, a))
	makeTree(t, attic, map[string]node{a: {content: string(archive)}, a + ".receipt.json": {content: "the other set's receipt"}})

	r := backup(t, runOpts{}, "prune", "--keep-last", "1", "--attic", attic, set)
	mustExit(t, r, exitFailed)
	if got := readFile(t, filepath.Join(attic, a)); !bytes.Equal(got, archive) {
		t.Errorf("the other set's archive %s is gone from the attic", a)
	}
	if got := string(readFile(t, filepath.Join(attic, a+".receipt.json"))); got != "the other set's receipt" {
		t.Errorf("the other set's receipt was changed: %q", got)
	}
	if got := setArchives(t, set); !slices.Equal(got, []string{a, a + ".receipt.json", b, b + ".receipt.json"}) {
		t.Errorf("the set holds %v, want both runs whole", got)
	}
}

// TestAttackPruneAtticIntoAnotherSet: --attic naming another backup set (of the same source,
// as two hosts' sets of one app are) moves the runs prune does not keep into that set,
// without its lock: they become that set's runs (its status lists them), and the next prune
// or create --keep-* of that set deletes them as old, the backups the user kept by moving
// them to an attic. The docs say an attic is not a set (sets: "a folder of archives without
// either [LATEST or the lock file] (an --attic …) is not a set").
// Correct: an --attic that is a set (holds LATEST or .backup.lock) is refused, exit 2, nothing moved.
func TestAttackPruneAtticIntoAnotherSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	// Sets of app whose two runs each are an hour apart, LATEST the newer.
	makeSet := func(set string, hours int) {
		runs := []simulatedRun{{now.Add(-time.Duration(hours) * time.Hour), format.Complete}, {now.Add(-time.Duration(hours+1) * time.Hour), format.Complete}}
		for _, r := range runs {
			writeSimulated(t, filepath.Join(dir, set), r)
		}
		makeTree(t, filepath.Join(dir, set), map[string]node{"LATEST": {content: runs[0].name() + "\n"}})
	}
	makeSet("two", 10)
	// Set three has lost its LATEST; its lock file says what it is, as for backup sets.
	makeSet("three", 20)
	os.Remove(filepath.Join(dir, "three", "LATEST"))
	makeTree(t, filepath.Join(dir, "three"), map[string]node{".backup.lock": {}})
	for _, other := range []string{"two", "three"} {
		set := filepath.Join(dir, "one-"+other)
		makeSet("one-"+other, 1)
		before := setArchives(t, set)
		r := backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", "--attic", other, set)
		if after := setArchives(t, set); r.code != exitUsage || !slices.Equal(after, before) {
			t.Errorf("--attic %s: exit %d, the set holds %v (was %v)\n%s%s", other, r.code, after, before, r.stdout, r.stderr)
		}
	}
}
