package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetJunkLatestOneLine: a junk LATEST is said once. create says it replaces it (and not
// a second time, that it cannot reuse from it); prune says it will not prune, and prints no
// "deleted 0, kept 0" that reads like a run that did its work.
func TestSetJunkLatestOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	junk := func() {
		if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte("junk junk\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	junk()
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	if n := strings.Count(r.stderr, `"junk junk"`); n != 1 {
		t.Errorf("create speaks of the junk LATEST %d times, want once:\n%s", n, r.stderr)
	}

	junk()
	r = backup(t, runOpts{}, "prune", "--keep-last", "1", set)
	mustExit(t, r, exitFailed)
	if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, `"junk junk"`) {
		t.Errorf("prune: stdout %q, stderr %q; want nothing on stdout and one line naming the junk", r.stdout, r.stderr)
	}
}

// TestSetRunsPlural: a set of one run without LATEST holds "1 run", not "1 runs".
func TestSetRunsPlural(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	if err := os.Remove(filepath.Join(set, "LATEST")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", set}, {"prune", "--keep-last", "1", set}} {
		r := backup(t, runOpts{}, args...)
		mustExit(t, r, exitFailed)
		if !strings.Contains(r.stderr, "the set holds 1 run (") {
			t.Errorf("%s: stderr %q, want %q", args[0], r.stderr, "the set holds 1 run (")
		}
	}
}

// TestSetLockFileHardLink: a set's lock file that is a hard link to another file (planted,
// or left by a `cp -al` snapshot of the set) is locked but never written: the pid a holder
// writes into its own lock file would truncate the other file.
func TestSetLockFileHardLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	makeTree(t, dir, map[string]node{"victim": {content: "precious data\n"}, "set": {kind: "dir"}})
	if err := os.Link(filepath.Join(dir, "victim"), filepath.Join(set, ".backup.lock")); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "prune", "--keep-last", "1", set), exitComplete)
	if got := string(readFile(t, filepath.Join(dir, "victim"))); got != "precious data\n" {
		t.Errorf("the file hard-linked as the lock holds %q", got)
	}
}
