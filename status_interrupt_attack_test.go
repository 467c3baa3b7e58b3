package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackStatusInterruptedKeepsMetrics: SIGTERM while backup status lists a bucket set
// wrote backup_set_healthy 0 (and said the set could not be read: "context canceled", exit
// 1) over the metrics file of the last status, where operations.md gives backup_set_healthy
// 0 to a set that cannot be read, and says a first SIGINT or SIGTERM stops a command
// cleanly with exit 130: an interrupt of the checker is no fault of the set, and must not
// fire the alert on it. Correct: exit 130, "backup status: interrupted", the file left as
// the last status wrote it (as an interrupted backup sets leaves its own).
func TestAttackStatusInterruptedKeepsMetrics(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	prom := filepath.Join(dir, "status.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "status", "--metrics-file", prom, s.loc), exitComplete)
	before, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := interruptAtRequest(t, s, dir, requestOfKind("list"), "status", "--json", "--metrics-file", prom, s.loc)
	if code != exitInterrupted || stderr != "backup status: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, exitInterrupted, "backup status: interrupted\n")
	}
	if after, err := os.ReadFile(prom); err != nil || string(after) != string(before) {
		t.Errorf("the metrics file after the interrupt (%v):\n%s\nwant the last status's:\n%s", err, after, before)
	}
	t.Logf("stdout: %s", stdout)
}
