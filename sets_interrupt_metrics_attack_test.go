package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetsInterruptedKeepsMetrics: SIGTERM while backup sets lists a bucket wrote
// backup_sets_listed 0 over the last listing's metrics file, which operations.md defines as
// "the location could not be listed" and its BackupSetsUnlisted rule alerts on: an
// interrupt said to be the bucket's failure. Found by the race pass.
// Correct: exit 130, "backup sets: interrupted", and the file left as the last listing
// wrote it, as an interrupted create leaves LATEST (node_exporter's mtime of the file shows
// how old it is).
func TestAttackSetsInterruptedKeepsMetrics(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	fleet := strings.TrimSuffix(s.loc, "/web1")
	prom := filepath.Join(dir, "sets.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "sets", "--metrics-file", prom, fleet), exitComplete)
	before, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}

	code, _, stderr := interruptAtRequest(t, s, dir, requestOfKind("list"), "sets", "--metrics-file", prom, fleet)
	if code != exitInterrupted || stderr != "backup sets: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, exitInterrupted, "backup sets: interrupted\n")
	}
	if after, err := os.ReadFile(prom); err != nil || string(after) != string(before) {
		t.Errorf("the metrics file after the interrupt (%v):\n%s\nwant the last listing's:\n%s", err, after, before)
	}
}
