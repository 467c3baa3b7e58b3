package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetCommandsInterruptedSayWhat: SIGTERM while activate read LATEST, or while
// prune deleted a run, from a bucket set. Both exited 130, but activate first said
// "backup activate: get LATEST: …: context canceled; activating replaces it" (as if LATEST
// were unreadable) and prune "backup prune: interrupted: s3://…: …: context canceled", Go's
// words for the interrupt. Found by the race pass.
// Correct: one line, "backup activate: interrupted; LATEST not moved" and "backup prune:
// interrupted" (prune's plan on stdout lists what left the set before), as create says.
func TestAttackSetCommandsInterruptedSayWhat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		held  func(r *http.Request) bool
		args  func(loc, first string) []string
		wantE string
	}{
		{"activate", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/LATEST")
		},
			func(loc, first string) []string { return []string{"activate", loc, first} }, "backup activate: interrupted; LATEST not moved\n"},
		{"prune", func(r *http.Request) bool {
			return r.Method == http.MethodDelete || (r.Method == http.MethodPost && r.URL.Query().Has("delete"))
		}, func(loc, _ string) []string { return []string{"prune", "--keep-last", "1", loc} }, "backup prune: interrupted\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
			first := readLatest(t, s.dir)
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
			latest := readLatest(t, s.dir)

			held := func(r *http.Request, _ string) bool { return tc.held(r) }
			code, _, stderr := interruptAtRequest(t, s, dir, held, tc.args(s.loc, first)...)
			if code != exitInterrupted || stderr != tc.wantE {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, exitInterrupted, tc.wantE)
			}
			if got := readLatest(t, s.dir); got != latest {
				t.Errorf("LATEST names %s, want %s as before", got, latest)
			}
		})
	}
}
