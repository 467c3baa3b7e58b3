package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackActivateStdoutIntoIdentity runs activate -i KEY with stdout appended (>>) to
// KEY, the identity file it reads the encrypted set's archive with. verify, list, restore
// and adopt check stdout's file against their identity files; activate checked it only
// against the set: it exited 0 and appended its --json report to the secret key's file,
// which then no longer parsed ("line 3: not an age identity") for any later command.
// Correct: exit 2 with one line, the key file as it was.
func TestAttackActivateStdoutIntoIdentity(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--recipient", key.recipient, "-i", key.identity, "--output-dir", "set", "app"), exitComplete)
	run := readLatest(t, filepath.Join(dir, "set"))
	for _, args := range [][]string{
		{"activate", "-n", "--json", "-i", key.identity, "set", run},
		{"activate", "-n", "-i", key.identity, "set", run},
	} {
		code, stderr, changed := appendStdout(t, dir, key.identity, args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
			t.Errorf("%q >> the identity file: exit %d, stderr %q, changed %v; want 2, one line, unchanged", args, code, stderr, changed)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-i", key.identity, "set"), exitComplete)
}
