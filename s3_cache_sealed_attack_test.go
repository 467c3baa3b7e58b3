package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3SealedCacheCopiesPileUp: docs/reuse.md says a set's cache folder holds "one
// archive" and that each run that keeps a copy removes the one before. The copies it
// removes were found by their source's name (backupset.SourceOf), which an encrypted
// archive's name, <UTC time>.zip.age, does not hold: every run with -i kept its copy and
// left all the ones before, a whole archive each, until the disk filled; and a copy of
// another archive than LATEST's was not named as such ("no local copy of LATEST's archive").
func TestAttackS3SealedCacheCopiesPileUp(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	root := filepath.Join(s.srv.CacheHome, "backup")
	for i, content := range []string{"one\n", "two\n", "three\n"} {
		makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: content}})
		r, latest := s3Run(t, s, dir, "-q", "--recipient", key.recipient, "-i", key.identity)
		mustExit(t, r, exitComplete)
		if got := cacheFiles(t, root); len(got) != 1 || filepath.Base(got[0]) != filepath.Base(latest) {
			t.Fatalf("after run %d the cache holds %v; want only the copy of LATEST's archive %s", i+1, got, filepath.Base(latest))
		}
	}

	// LATEST moved on by another host (here: a run that keeps no copy): the copy is of
	// another archive, and the run says which.
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "four\n"}})
	r, _ := s3Run(t, s, dir, "--recipient", key.recipient, "--no-cache")
	mustExit(t, r, exitComplete)
	r, _ = s3Run(t, s, dir, "--recipient", key.recipient, "-i", key.identity)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "the local copy in") || !strings.Contains(r.stderr, "not of LATEST's archive") {
		t.Errorf("a copy of another archive than LATEST's: stderr %q; want it named", r.stderr)
	}
}
