package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetsPartListedMetrics: a folder below LOCATION that backup sets could not list
// (its permissions changed) made sets exit 1, as sets.md says ("when LOCATION (or a folder
// below it) cannot be listed"), but its metrics file said backup_sets_listed 1, which
// operations.md defines as "the location could be listed", and simply left out the sets in
// that folder: their series vanished, so neither BackupSetUnhealthy (no series is 0) nor
// BackupSetsUnlisted fired, and Prometheus alone never learned. Correct: backup_sets_listed
// 0, so that the alert fires, with the series of the sets that were found still written.
func TestAttackSetsPartListedMetrics(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	as := runOpts{dir: dir, uid: nobody}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	fleet := filepath.Join(dir, "fleet")
	makeTree(t, fleet, map[string]node{".": {kind: "dir", mode: 0o777}})
	for _, set := range []string{"web1", "hidden/web2"} {
		mustExit(t, backup(t, as, "create", "-q", "--output-dir", filepath.Join(fleet, set), "app"), exitComplete)
	}
	if err := os.Chmod(filepath.Join(fleet, "hidden"), 0o000); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(dir, "sets.prom")
	r := backup(t, as, "sets", "--metrics-file", prom, fleet)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("stderr %q; want the folder that could not be listed", r.stderr)
	}
	promtoolCheck(t, prom)
	if v := metricValue(t, prom, "backup_sets_listed"); v != 0 {
		t.Errorf("backup_sets_listed %v with %s unlisted; want 0", v, filepath.Join(fleet, "hidden"))
	}
	if v := metricValue(t, prom, `backup_set_healthy{set="`+filepath.Join(fleet, "web1")+`"}`); v != 1 {
		t.Errorf("web1, found and healthy: backup_set_healthy %v, want 1", v)
	}
}
