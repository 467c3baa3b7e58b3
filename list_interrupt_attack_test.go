package main

import (
	"path/filepath"
	"testing"
)

// TestAttackListInterrupted: SIGTERM while backup list read a bucket set's archive ended it
// with exit 1 and Go's words ("…: interrupted: context canceled"), as if the archive could
// not be read, which is what exit 1 means for list; operations.md says a first SIGINT or
// SIGTERM stops a command cleanly with exit 130. Correct: exit 130, "backup list:
// interrupted", as verify and sets say it.
func TestAttackListInterrupted(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)

	for _, args := range [][]string{{"list"}, {"list", "--json"}} {
		code, _, stderr := interruptAtRequest(t, s, dir, requestOfKind("ranged read"), append(args, s.loc)...)
		if code != exitInterrupted || stderr != "backup list: interrupted\n" {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, code, stderr, exitInterrupted, "backup list: interrupted\n")
		}
	}
}
