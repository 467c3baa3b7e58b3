package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// straceRun runs the binary under strace with inject on the calls that touch path (every
// call traced when path is ""), in dir.
func straceRun(t *testing.T, dir, path, trace, inject string, args ...string) result {
	t.Helper()
	mustTool(t, "strace")
	opts := []string{"-f", "-qq", "-o", os.DevNull, "-e", "trace=" + trace, "-e", "inject=" + inject}
	if path != "" {
		opts = append(opts, "-P", path)
	}
	cmd := exec.Command("strace", append(append(opts, binary), args...)...)
	cmd.Dir = dir
	// strace counts each thread's calls apart: with one thread running Go code, the nth call
	// of the run is the nth of the thread that makes it, whatever the machine's load.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("running strace: %v", err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// TestAttackCreatePruneFailSaysKeptNone: create --keep-last 2 prunes the oldest of three
// runs; the unlink of its archive fails (EIO). The summary said "pruned 0, kept 0", while the
// set still holds all three runs: the count of a prune cut short is only of the runs decided
// before the failure.
// Correct: a prune that stopped says so, as `backup prune` does ("then stopped").
func TestAttackCreatePruneFailSaysKeptNone(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir, set, a, _ := newestSet(t)
	r := straceRun(t, dir, filepath.Join(set, a), "unlinkat", "unlinkat:error=EIO:when=1",
		"create", "--output-dir", set, "--keep-last", "2", "app")
	mustExit(t, r, exitFailed)
	if _, err := os.Stat(filepath.Join(set, a)); err != nil {
		t.Fatalf("%s is gone; the test needs its unlink to fail: %s", a, r.stderr)
	}
	if strings.Contains(r.stderr, "kept 0") || !strings.Contains(r.stderr, "pruned 0, then stopped") {
		t.Errorf("the set keeps three runs, but create says:\n%s", r.stderr)
	}
}

// TestAttackRestorePresentEIOSaysExists: a second restore into a DEST that holds the tree
// reads each file there to tell whether it is already present. A read that fails (EIO)
// made the file a conflict: "exists in the destination (use --force to replace it)", which
// says the file differs from the archive, when nothing is known of its content; and
// --force would then fail too, since its before-state cannot read the file either.
// Correct: the file is refused with the I/O error, as a file whose lstat fails is.
func TestAttackRestorePresentEIOSaysExists(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	r := straceRun(t, dir, filepath.Join(dest, "app", "a.txt"), "read", "read:error=EIO:when=1",
		"restore", arch, dest)
	mustExit(t, r, exitFailed)
	if strings.Contains(r.stderr, "exists in the destination") || !strings.Contains(r.stderr, "app/a.txt: cannot check it in the destination: read") ||
		!strings.Contains(r.stderr, "input/output error") {
		t.Errorf("the read of app/a.txt failed (EIO), but restore says:\n%s", r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/a.txt"), "alpha\n")
}

// TestAttackCreateForceLeavesOldArchiveSilently: create --force -o over an archive swaps
// the new pair in (RENAME_EXCHANGE), then removes the old pair from their temp names. When
// those unlinks fail (EIO), the run said complete and nothing else: the old archive, a whole
// backup, stayed hidden at .app.zip.tmp-N, and no later run of -o removes it (only a set's
// lock holder sweeps temp files).
// Correct: the run still succeeds, and says where each old file it could not remove stays.
func TestAttackCreateForceLeavesOldArchiveSilently(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "new\n"}})
	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{"app.zip": {content: "old archive"}, "app.zip.receipt.json": {content: "old receipt"}})
	archive := filepath.Join(out, "app.zip")
	r := straceRun(t, dir, "", "unlinkat", "unlinkat:error=EIO:when=1+", "create", "--force", "-o", archive, "app")
	mustExit(t, r, exitComplete)
	extra := leftovers(t, out, "app.zip", "app.zip.receipt.json")
	if len(extra) == 0 {
		t.Fatalf("nothing left in %s; the test needs the unlinks to fail: %s", out, r.stderr)
	}
	for _, name := range extra {
		if !strings.Contains(r.stderr, filepath.Join(out, name)) || !strings.Contains(r.stderr, "input/output error") {
			t.Errorf("%s stays in %s, but create says:\n%s", name, out, r.stderr)
		}
	}
}
