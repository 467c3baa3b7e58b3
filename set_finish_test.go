package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
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

// TestSetAfterHooksRunUnlocked: the --exec-after hooks of a set's run run once the set's
// lock is released (a hook may run backup on the set), and are still added to the run's
// receipt, under the lock taken again.
func TestSetAfterHooksRunUnlocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set,
		"--exec-after", binary+" prune --keep-last 5 "+set, "app")
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stderr, "another backup") {
		t.Errorf("the after hook found the set locked:\n%s", r.stderr)
	}
	latest := readLatest(t, set)
	data, err := os.ReadFile(filepath.Join(set, latest+format.ReceiptSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var rc format.Receipt
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	if len(rc.Hooks) != 1 || rc.Hooks[0].When != "after" || rc.Hooks[0].ExitCode != 0 {
		t.Errorf("receipt hooks %+v, want the after hook, exit 0", rc.Hooks)
	}
}
