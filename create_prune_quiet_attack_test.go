package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackCreateQuietPruneStopped: sets.md says a create whose --keep-* prune fails part-way
// "lists what it deleted" and "ends `pruned N, then stopped`, the error on the next line,
// exit 1". With -q (the README's cron line) the run printed the error alone: which backups
// the prune had deleted before it stopped, and that it stopped, never reached cron's mail,
// though the run failed. Correct: a prune that stopped is reported whole even with -q (a
// prune that succeeds stays quiet).
func TestAttackCreateQuietPruneStopped(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	for range 3 {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
		time.Sleep(1100 * time.Millisecond) // one run a second: ordered by their names too
	}
	archives := setArchives(t, set)
	// The second-oldest archive cannot be removed: the prune deletes the oldest, then stops.
	stuck := filepath.Join(set, archives[2]) // [0] and [1] are the oldest archive and its receipt
	if out, err := exec.Command("chattr", "+i", stuck).CombinedOutput(); err != nil {
		t.Skipf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", stuck).Run() })

	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--keep-last", "1", "app")
	mustExit(t, r, exitFailed)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "  deleted "+filepath.Base(archives[0])) ||
		lines[len(lines)-2] != "backup: pruned 1, then stopped" || !strings.Contains(lines[len(lines)-1], "operation not permitted") {
		t.Errorf("stderr:\n%s\nwant the deleted backup, 'backup: pruned 1, then stopped', then the error", r.stderr)
	}

	r = backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if r.stderr != "" {
		t.Errorf("a quiet run without a prune said %q", r.stderr)
	}
}
