package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackStdoutIntoSetCommands runs prune, activate, adopt and restore with stdout
// appended (>>) to a file they read: the set's LATEST, its archive, the archive adopted or
// restored. None of them checked stdout's file: each exited 0 and appended its report (prune
// --json to LATEST, restore --json to the archive it read). Correct: exit 2 with one line
// before anything is done, every file as it was.
func TestAttackStdoutIntoSetCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	run := readLatest(t, filepath.Join(dir, "set"))
	for _, tc := range []struct {
		into string
		args []string
	}{
		{"set/LATEST", []string{"prune", "--json", "--keep-last", "5", "set"}},
		{"set/" + run, []string{"activate", "set", run}},
		{"set/LATEST", []string{"adopt", "set", "a.zip"}},
		{"a.zip", []string{"adopt", "set", "a.zip"}},
		{"a.zip", []string{"restore", "--json", "a.zip", "r1"}},
		{"set/LATEST", []string{"restore", "--json", "set", "r2"}},
	} {
		code, stderr, changed := appendStdout(t, dir, filepath.Join(dir, tc.into), tc.args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
			t.Errorf("%q >> %s: exit %d, stderr %q, changed %v; want 2, one line, unchanged", tc.args, tc.into, code, stderr, changed)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "set"), exitComplete)
}
