package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// TestStatusFutureLatest: LATEST names a backup that started 3 hours from now (a clock set
// wrong on the host that made it). Without --max-age status said "… is complete, -3h old";
// with it, the run's name unquoted. Correct: without --max-age still healthy (exit 0), and
// the line says the start is in the future and to check the clock; with it, exit 1 and the
// name quoted as every line quotes it.
func TestStatusFutureLatest(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	run := simulatedRun{time.Now().UTC().Truncate(time.Second).Add(3 * time.Hour), format.Complete}
	writeSimulated(t, set, run)
	makeTree(t, set, map[string]node{"LATEST": {content: run.name() + "\n"}})

	r := backup(t, runOpts{}, "status", set)
	mustExit(t, r, exitComplete)
	if !regexp.MustCompile(`is complete, dated [23]h[0-9]+m in the future: check the clock\n`).MatchString(r.stdout) || strings.Contains(r.stdout, ", -") {
		t.Errorf("stdout:\n%s\nwant LATEST said to be dated 3h in the future", r.stdout)
	}
	r = backup(t, runOpts{}, "status", "--max-age", "1d", set)
	mustExit(t, r, exitFailed)
	if want := "backup status: LATEST " + format.QuoteName(run.name()) + " started in the future"; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr %q, want it to begin %q", r.stderr, want)
	}
}
