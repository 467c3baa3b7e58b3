package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsFile runs create into a set with --metrics-file, complete and then failed, and
// status after them: promtool accepts every file, the failed run says failed and keeps the
// complete run's success time, and status adds the set's own metrics.
func TestMetricsFile(t *testing.T) {
	mustTool(t, "promtool")
	dir := t.TempDir()
	src, set, prom := filepath.Join(dir, "app"), filepath.Join(dir, "set"), filepath.Join(dir, "backup.prom")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}, "sock": {kind: "socket"}})
	label := `{set="` + set + `"}`

	r := backup(t, runOpts{}, "create", "-q", "--output-dir", set, "--metrics-file", prom, src)
	if r.code != 0 {
		t.Fatalf("complete run: exit %d: %s", r.code, r.stderr)
	}
	promtoolCheck(t, prom)
	success := metricValue(t, prom, "backup_last_success_timestamp_seconds"+label)
	for series, want := range map[string]float64{
		`backup_last_status{set="` + set + `",status="complete"}`: 1,
		`backup_last_status{set="` + set + `",status="failed"}`:   0,
		"backup_last_run_timestamp_seconds" + label:               success,
		"backup_files" + label:                                    1,
		"backup_bytes" + label:                                    5,
		"backup_skipped_paths" + label:                            1,
		"backup_lost_paths" + label:                               0,
		"backup_last_exit_code" + label:                           0,
	} {
		if got := metricValue(t, prom, series); got != want {
			t.Errorf("after a complete run: %s = %v, want %v", series, got, want)
		}
	}
	if success == 0 || metricValue(t, prom, "backup_archive_bytes"+label) == 0 {
		t.Errorf("after a complete run: last success %v, archive bytes 0; want both set", success)
	}

	os.RemoveAll(src) // the next run fails: its SOURCE is gone
	r = backup(t, runOpts{}, "create", "-q", "--output-dir", set, "--metrics-file", prom, src)
	if r.code != exitFailed {
		t.Fatalf("run without its source: exit %d, want 1: %s", r.code, r.stderr)
	}
	promtoolCheck(t, prom)
	for series, want := range map[string]float64{
		`backup_last_status{set="` + set + `",status="complete"}`: 0,
		`backup_last_status{set="` + set + `",status="failed"}`:   1,
		"backup_last_success_timestamp_seconds" + label:           success,
		"backup_last_exit_code" + label:                           1,
		"backup_archive_bytes" + label:                            0,
	} {
		if got := metricValue(t, prom, series); got != want {
			t.Errorf("after a failed run: %s = %v, want %v", series, got, want)
		}
	}

	statusProm := filepath.Join(dir, "status.prom")
	if r := backup(t, runOpts{}, "status", "--metrics-file", statusProm, set); r.code != 0 {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	promtoolCheck(t, statusProm)
	for series, want := range map[string]float64{
		"backup_set_archives" + label:                           1,
		"backup_set_healthy" + label:                            1,
		"backup_last_success_timestamp_seconds" + label:         success,
		`backup_last_status{set="` + set + `",status="failed"}`: 1,
	} {
		if got := metricValue(t, statusProm, series); got != want {
			t.Errorf("status: %s = %v, want %v", series, got, want)
		}
	}
	if age := metricValue(t, statusProm, "backup_set_latest_age_seconds"+label); age < 0 {
		t.Errorf("status: LATEST age %v, want >= 0", age)
	}
}

// TestMetricsFileUnwritable: a metrics file that cannot be written is a warning on stderr;
// the backup's exit code stays the backup's.
func TestMetricsFileUnwritable(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"a.txt": {content: "hello"}})
	prom := filepath.Join(dir, "missing", "backup.prom")
	r := backup(t, runOpts{}, "create", "-q", "-o", filepath.Join(dir, "a.zip"), "--metrics-file", prom, src)
	if r.code != 0 || !strings.Contains(r.stderr, "backup: could not write metrics "+prom) {
		t.Errorf("exit %d, stderr %q; want 0 and a warning naming %s", r.code, r.stderr, prom)
	}
}

func promtoolCheck(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(string(data))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics %s: %v\n%s\n%s", path, err, out, data)
	}
}

// metricValue is the value of the series (name and labels, as written) in the file at path.
func metricValue(t *testing.T, path, series string) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			return f
		}
	}
	t.Fatalf("%s has no series %s:\n%s", path, series, data)
	return 0
}

// TestAlertRules checks the alert rules that docs/operations.md shows, kept in contrib/prometheus, with promtool.
func TestAlertRules(t *testing.T) {
	mustTool(t, "promtool")
	out, err := exec.Command("promtool", "check", "rules", "contrib/prometheus/backup-alerts.yml").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS: 4 rules found") {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
