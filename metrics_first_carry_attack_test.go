package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAttackMetricsFirstFileForgetsSetSuccess: an operator adds --metrics-file to the cron
// line of a set that has backed up for months. The first run with it did not succeed (a
// --exec-before dump failed; or the set was locked by a prune the operator ran, exit 4), and
// wrote backup_last_success_timestamp_seconds 0, "none known", as there was no file to carry
// it over from: BackupTooOld (time() - 0 > 26h, severity page) fired at once, "No complete
// backup in 26 hours", over a set whose LATEST is a complete backup of last night. A run
// into a set that has no file to carry the last success from takes it from the set, as
// status does: the backup LATEST names, when complete. A file that exists but cannot be
// read still gives 0 and a line (TestAttackMetricsCarryUnreadSaysNothing).
func TestAttackMetricsFirstFileForgetsSetSuccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	want := float64(readReceipt(t, filepath.Join(set, readLatest(t, set))+".receipt.json").FinishedAt.Unix())
	series := `backup_last_success_timestamp_seconds{set="` + set + `"}`

	prom := filepath.Join(dir, "failed.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--metrics-file", prom, "--exec-before", "exit 3", "app"), exitFailed)
	if got := metricValue(t, prom, series); got != want {
		t.Errorf("a failed first run wrote the last success %v, want LATEST's %v", got, want)
	}

	lock, err := os.OpenFile(filepath.Join(set, ".backup.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	prom = filepath.Join(dir, "locked.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "--metrics-file", prom, "app"), exitLocked)
	if got := metricValue(t, prom, series); got != want {
		t.Errorf("a locked first run wrote the last success %v, want LATEST's %v", got, want)
	}
}
