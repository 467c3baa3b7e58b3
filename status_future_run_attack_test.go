package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// TestAttackStatusFutureRunSilencesAlerts: a set's LATEST is a complete backup of three days
// ago, the run after it failed an hour ago, and one old run was made while the host's clock
// was a year ahead (its receipt says so; prune keeps it, "started in the future"). status
// --metrics-file wrote that run as the set's last run and its finish as the last success:
// backup_last_success_timestamp_seconds a year from now and backup_last_status complete, so
// that neither BackupTooOld nor BackupNotComplete could fire for a year while no backup
// was made, and its table said "LATEST is not the newest complete backup (… is newer)" of
// it. create, prune and status's own verdict already say such a run orders nothing.
// Correct: the metrics describe the failed run, with the last success of three days ago,
// and no line calls the future run newer.
func TestAttackStatusFutureRunSilencesAlerts(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	good := simulatedRun{now.Add(-72 * time.Hour), format.Complete}
	failed := simulatedRun{now.Add(-time.Hour), format.Failed}
	ahead := simulatedRun{now.AddDate(1, 0, 0), format.Complete}
	for _, r := range []simulatedRun{good, failed, ahead} {
		writeSimulated(t, set, r)
	}
	makeTree(t, set, map[string]node{"LATEST": {content: good.name() + "\n"}})
	prom := filepath.Join(t.TempDir(), "app.prom")

	r := backup(t, runOpts{}, "status", "--metrics-file", prom, set)
	mustExit(t, r, exitComplete)
	label := `{set="` + set + `"}`
	if got, want := metricValue(t, prom, "backup_last_success_timestamp_seconds"+label), float64(good.started.Add(time.Minute).Unix()); got != want {
		t.Errorf("backup_last_success_timestamp_seconds = %v, want %v (the finish of %s, not of the run dated a year ahead)", got, want, good.name())
	}
	if got := metricValue(t, prom, `backup_last_status{set="`+set+`",status="failed"}`); got != 1 {
		t.Errorf("backup_last_status failed = %v, want 1: the last run failed", got)
	}
	if strings.Contains(r.stdout, ahead.name()+" is newer") {
		t.Errorf("status calls the run dated a year ahead newer than LATEST:\n%s", r.stdout)
	}
}

// TestAttackCreateMetricsFutureLatestSuccess: the first create with --metrics-file on a set
// whose LATEST was made while the host's clock was a year ahead fails (its source is not
// mounted). With no last success to carry over, it took the finish of LATEST's backup, a
// year from now; every failing run after it carried that on, and BackupTooOld could not
// fire for a year. Correct: a backup dated ahead gives no last success (0, unknown).
func TestAttackCreateMetricsFutureLatestSuccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	ahead := simulatedRun{time.Now().UTC().Truncate(time.Second).AddDate(1, 0, 0), format.Complete}
	writeSimulated(t, set, ahead)
	makeTree(t, set, map[string]node{"LATEST": {content: ahead.name() + "\n"}})
	prom := filepath.Join(dir, "app.prom")

	mustExit(t, backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--metrics-file", prom, "app"), exitFailed)
	if got := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+set+`"}`); got > float64(time.Now().Unix()) {
		t.Errorf("backup_last_success_timestamp_seconds = %v, in the future: the age alert cannot fire until then", got)
	}
}
