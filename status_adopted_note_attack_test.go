package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackStatusBlamesAdoptedRun: an operator adopted an archive made elsewhere with -o,
// newer than the set's LATEST, without --activate, as adopt's docs suggest to keep it
// without activating it. status then said "LATEST is not the newest complete backup (… is
// newer): not activated by hand (a run that could not move LATEST, or LATEST edited)",
// which names two faults and not the plain action that explains it. The note now names
// adopt without --activate among its causes; still exit 0, and still one line.
func TestAttackStatusBlamesAdoptedRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	time.Sleep(1100 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "app/a"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "elsewhere.zip", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "adopt", set, "elsewhere.zip"), exitComplete)
	r := backup(t, runOpts{dir: dir}, "status", set)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stdout, "not activated by hand (adopted without --activate, a run that could not move LATEST, or LATEST edited)\n") {
		t.Errorf("status:\n%s\nwant the note to name adopt without --activate", r.stdout)
	}
}
