package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSetMetricsWrittenUnderLock: a run's metrics file is written before it releases the
// set's lock, so a run that waited for it (--wait) writes its metrics after, and the file
// describes the set's last run. strace holds the first run's rename of the metrics file.
func TestSetMetricsWrittenUnderLock(t *testing.T) {
	t.Parallel()
	dir, set, _, _ := newestSet(t)
	prom := filepath.Join(dir, "backup.prom")
	if err := os.WriteFile(prom, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, aErr := heldRun(t, dir, "renameat2", prom, "create", "--output-dir", set, "--metrics-file", prom, "app")
	waitFor(t, "A's metrics staged", func() bool {
		temps, _ := filepath.Glob(filepath.Join(dir, ".backup.prom.tmp-*"))
		return len(temps) > 0
	})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "--wait", "1m", "--metrics-file", prom, "--exec-before", "false", "app")
	mustExit(t, r, exitFailed)
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr)
	}
	if got := exitMetric(t, prom); got != exitFailed {
		t.Errorf("the metrics file says the last run exited %v; the last run (B, after A) exited %d", got, exitFailed)
	}
}
