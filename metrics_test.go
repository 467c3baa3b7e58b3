package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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

// TestAttackMetricsLabelNotUTF8: a set in a folder whose name is not UTF-8
// ("b\xffad"): --metrics-file wrote the folder's bytes raw into the set label. The
// Prometheus text format is UTF-8 ("invalid label value" from promtool check metrics, and
// node_exporter's textfile collector drops the whole file), so the set's metrics, the last
// success its age alert watches included, were never collected: the alert on a stale
// backup cannot fire for a series that does not exist. docs/operations.md promises the
// "text format for node_exporter's textfile collector".
func TestAttackMetricsLabelNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "b\xffad")
	for _, args := range [][]string{
		{"create", "-q", "--output-dir", set, "--metrics-file", filepath.Join(dir, "create.prom"), "src/app"},
		{"status", "--metrics-file", filepath.Join(dir, "status.prom"), set},
	} {
		mustExit(t, backup(t, runOpts{dir: dir}, args...), exitComplete)
		prom := args[slices.Index(args, "--metrics-file")+1]
		data, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(data) {
			t.Errorf("backup %s --metrics-file wrote a file that is not UTF-8, which the Prometheus text format must be: %q", args[0], strings.SplitN(string(data), "\n", 4)[2])
		}
		if _, err := exec.LookPath("promtool"); err == nil {
			if out, err := exec.Command("sh", "-c", "promtool check metrics < "+prom).CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics on backup %s's file: %v: %s", args[0], err, out)
			}
		}
	}
}

// TestAttackMetricsSetLabelsCollide: the fix of TestAttackMetricsLabelNotUTF8 writes
// each byte of a set label that is not UTF-8 as the four characters \xNN, "unlike U+FFFD, it
// keeps two such names apart" (metrics.go); but a folder may be named with those four
// characters too. Two sets, b\xffad (the byte 0xff) and `b\xffad` (backslash, x, f, f), get
// the same set label: sets --metrics-file writes every series of both twice with one label
// set, which the Prometheus text format forbids (node_exporter fails the file's series as
// "collected before with the same name and label values"), and an alert on one set's
// health or age may read the other's.
func TestAttackMetricsSetLabelsCollide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "1"}})
	for _, set := range []string{"b\xffad", `b\xffad`} {
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "sets", set), "src/app"), exitComplete)
	}
	prom := filepath.Join(dir, "sets.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "sets", "--metrics-file", prom, filepath.Join(dir, "sets")), exitComplete)
	seen := map[string]bool{}
	for _, line := range strings.Split(string(readFile(t, prom)), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series := line[:strings.LastIndexByte(line, ' ')]
		if seen[series] {
			t.Errorf("sets --metrics-file wrote the series %s twice: the sets b\\xffad and `b\\xffad` have one label", series)
		}
		seen[series] = true
	}
}

// TestAttackDocsStatusMetricsNoBackupYet: docs/operations.md has status write the last
// success as 0 when none is known, so that BackupTooOld "also fires for a set that never had
// one"; and so does create. Status of a set that holds no run yet (its first run killed, or
// still going) wrote no last success at all: no series, no alert on its age.
func TestAttackDocsStatusMetricsNoBackupYet(t *testing.T) {
	dir := t.TempDir()
	set, prom := filepath.Join(dir, "set"), filepath.Join(dir, "status.prom")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, ".backup.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{}, "status", "--metrics-file", prom, set), exitFailed)
	series := `backup_last_success_timestamp_seconds{set="` + set + `"}`
	if got := metricValue(t, prom, series); got != 0 {
		t.Errorf("%s = %v, want 0", series, got)
	}
}
