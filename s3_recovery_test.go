package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestS3SetRollbackAttic: activate and prune --attic work on a set in a bucket as on a
// folder: LATEST rolls back to the first of three runs and status says why; prune keeps it
// and the newest, and moves the middle run into a local attic.
func TestS3SetRollbackAttic(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: s.env}, args...) }
	for _, f := range []string{"a", "b", "c"} {
		makeTree(t, filepath.Join(dir, "app"), map[string]node{f: {content: f + "\n"}})
		mustExit(t, run("create", "--output-dir", s.loc, "app"), exitComplete)
	}
	all := setArchives(t, s.dir)
	mustExit(t, run("activate", s.loc, all[0]), exitComplete)
	if got := readLatest(t, s.dir); got != all[0] {
		t.Fatalf("LATEST names %q after activate, want %q", got, all[0])
	}
	r := run("status", s.loc)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "LATEST is not the newest complete backup ("+all[4]+" is newer): activated by hand") {
		t.Errorf("status says:\n%s", r.stdout)
	}
	attic := filepath.Join(dir, "attic")
	makeTree(t, attic, map[string]node{"keep": {content: "x"}})
	mustExit(t, run("prune", "--keep-last", "1", "--attic", attic, s.loc), exitComplete)
	if got, want := setArchives(t, s.dir), slices.Concat(all[:2], all[4:]); !slices.Equal(got, want) {
		t.Errorf("the bucket holds %v, want %v", got, want)
	}
	if got := setArchives(t, attic); !slices.Equal(got, all[2:4]) {
		t.Errorf("the attic holds %v, want %v", got, all[2:4])
	}
	mustExit(t, run("verify", filepath.Join(attic, all[2])), exitComplete)
}
