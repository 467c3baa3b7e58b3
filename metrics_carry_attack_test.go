package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackMetricsCarryUnreadSaysNothing: a failed run carries the last success over from
// the metrics file it replaces. The open of that file fails (EIO): the run wrote
// backup_last_success_timestamp_seconds 0, "none known", over a file that held a success,
// and said nothing of it: the dashboard shows the set never backed up, and no line tells
// the operator why (the age alert fires on a set whose last backup is an hour old).
// Correct: the value it cannot carry is written as 0 (unknown: the alert must fire rather
// than go quiet), and one line on stderr, even with -q, names the file and the cause.
func TestAttackMetricsCarryUnreadSaysNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	prom := filepath.Join(dir, "m.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--metrics-file", prom, "-o", "a.zip", "app"), exitComplete)
	r := straceRun(t, dir, prom, "openat", "openat:error=EIO", "create", "-q", "--metrics-file", prom, "-o", "b.zip", "missing")
	mustExit(t, r, exitFailed)
	if got := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+dir+`"}`); got != 0 {
		t.Fatalf("the last success could not be read, and the run wrote %v", got)
	}
	want := "backup: metrics " + prom + ": the last success it held cannot be carried over (open: input/output error); written as 0, unknown\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("the last success was lost, and stderr says:\n%s\nwant the line:\n%s", r.stderr, want)
	}
}

// TestMetricsCarryUnreadStatusSays: status of a set it cannot read carries the last success
// over from the metrics file it replaces; when that file cannot be read either (EIO), the
// value written is 0, unknown, and one line says why, as create's does.
func TestMetricsCarryUnreadStatusSays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set, prom := filepath.Join(dir, "set"), filepath.Join(dir, "m.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--metrics-file", prom, "--output-dir", set, "app"), exitComplete)
	gone := filepath.Join(dir, "gone")
	r := straceRun(t, dir, prom, "openat", "openat:error=EIO", "status", "--metrics-file", prom, gone)
	mustExit(t, r, exitFailed)
	want := "backup status: metrics " + prom + ": the last success it held cannot be carried over (open: input/output error); written as 0, unknown\n"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("status could not read the metrics file, and says:\n%s\nwant the line:\n%s", r.stderr, want)
	}
}
