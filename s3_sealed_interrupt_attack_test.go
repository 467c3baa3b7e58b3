package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAttackInterruptedRunSaysWhyNoReuse: SIGTERM while a run into a bucket set reads
// LATEST (or its archive's receipt, or stats the archive) to find the local copy to reuse
// from gave, before the run's own "failed: interrupted", a line that blamed the reference:
// "backup: reading every file: no unchanged entry is copied: s3://…/LATEST: interrupted:
// context canceled", Go's words, for no reason of the reference's. An interrupted run
// says that it was interrupted, once.
func TestAttackInterruptedRunSaysWhyNoReuse(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "alpha\n"}})
	args := []string{"create", "--recipient", key.recipient, "-i", key.identity, "--output-dir", s.loc, "app"}
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, args...), exitComplete)
	// The first read of LATEST tells what the set holds; the second finds its archive's copy.
	var reads atomic.Int32
	held := func(r *http.Request, _ string) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/LATEST") && reads.Add(1) == 2
	}
	code, _, stderr := interruptAtRequest(t, s, dir, held, args...)
	if code != exitInterrupted || stderr != "backup: failed: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 130 and only the line that says it was interrupted", code, stderr)
	}
}
