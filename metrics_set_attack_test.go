package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackMetricsFileInOtherSet names as --metrics-file the LATEST of a backup set that
// the command does not own: create -o (no set of its own), create into another set, and
// status of another set. Each replaced that set's LATEST with Prometheus text and said
// complete; the set's own check only covered the set the command runs on. Correct: a
// --metrics-file whose folder is any backup set is refused (exit 2, one line naming it), and
// the set's LATEST is as it was.
func TestAttackMetricsFileInOtherSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	for _, set := range []string{"set", "other"} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	}
	latest := readLatest(t, filepath.Join(dir, "other"))
	for _, args := range [][]string{
		{"create", "-q", "-o", "x.zip", "--metrics-file", "other/LATEST", "app"},
		{"create", "-q", "--output-dir", "set", "--metrics-file", "other/LATEST", "app"},
		{"create", "-q", "-o", "y.zip", "--metrics-file", "other/run.prom", "app"},
		{"status", "--metrics-file", "other/LATEST", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "other") || !strings.Contains(r.stderr, "backup set") {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming the set other", args, r.code, r.stderr)
		}
		if got := readLatest(t, filepath.Join(dir, "other")); got != latest {
			t.Fatalf("%q: other/LATEST = %q, want %q", args, got, latest)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "other"), exitComplete)
}
