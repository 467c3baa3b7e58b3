package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3StatusMetricsStaleWhenConfigUnreadable: docs/operations.md says `backup status
// --metrics-file PATH DIR` writes its metrics "also when the set cannot be read:
// backup_set_healthy 0", and showStatus says "A set that cannot be read is not healthy: the
// metrics must stop saying it is". A set in a bucket whose AWS configuration cannot be loaded
// (AWS_PROFILE naming a profile that is gone, a credentials file a rotation left half
// written) cannot be read either; but status takes that for a usage error (exit 2) before it
// reaches showStatus, and the metrics file of the last good check stays in place, saying
// healthy 1 for as long as the configuration stays broken.
func TestAttackS3StatusMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	prom := filepath.Join(dir, "set.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "status", "--metrics-file", prom, s.loc), exitComplete)
	healthy := `backup_set_healthy{set="` + s.loc + `"}`
	if v := metricValue(t, prom, healthy); v != 1 {
		t.Fatalf("a healthy set: %s %v", healthy, v)
	}

	// The profile the cron job names is gone from the configuration.
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "status", "--metrics-file", prom, s.loc)
	if r.code == exitComplete {
		t.Fatalf("status with an unloadable AWS configuration: exit 0")
	}
	if r.code != exitFailed {
		t.Errorf("status with an unloadable AWS configuration: exit %d (usage), want 1 (the set cannot be read); stderr %q", r.code, r.stderr)
	}
	if v := metricValue(t, prom, healthy); v != 0 {
		data, _ := os.ReadFile(prom)
		t.Errorf("the set could not be read, but the metrics file still says %s %v (left from the last check):\n%s", healthy, v,
			strings.TrimSpace(string(data)))
	}
}

// TestAttackS3CreateMetricsStaleWhenConfigUnreadable: the same for create. docs/operations.md:
// `create --metrics-file` is written "after every outcome once the flags parse: complete,
// incomplete, failed, interrupted, and a set the run could not take — locked by another run,
// refused by the bucket…". A run whose AWS configuration cannot be loaded (AWS_PROFILE naming
// a profile that is gone) could not take its set either, but it exits 2 as a usage error:
// the metrics file keeps the last run's exit code 0 and status complete.
func TestAttackS3CreateMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	prom := filepath.Join(dir, "run.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--metrics-file", prom, "--output-dir", s.loc, "app"), exitComplete)
	code := `backup_last_exit_code{set="` + s.loc + `"}`
	if v := metricValue(t, prom, code); v != 0 {
		t.Fatalf("a complete run: %s %v", code, v)
	}
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "create", "--metrics-file", prom, "--output-dir", s.loc, "app")
	if r.code == exitComplete {
		t.Fatalf("create with an unloadable AWS configuration: exit 0")
	}
	if v := metricValue(t, prom, code); v != float64(r.code) {
		t.Errorf("the run exited %d (%q), but the metrics file still says %s %v (the last run's)", r.code, r.stderr, code, v)
	}
}

// TestAttackS3SetsMetricsStaleWhenConfigUnreadable: the same for backup sets, whose
// metrics file docs/operations.md describes as "backup_sets_listed: 1 when the location
// could be listed; 0 when not, and then the file holds nothing else". An unloadable AWS
// configuration is a usage error (exit 2) and the file of the last listing stays: listed 1,
// every set healthy.
func TestAttackS3SetsMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	fleet := strings.TrimSuffix(s.loc, "/web1")
	prom := filepath.Join(dir, "sets.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "sets", "--metrics-file", prom, fleet), exitComplete)
	if v := metricValue(t, prom, "backup_sets_listed"); v != 1 {
		t.Fatalf("a listed fleet: backup_sets_listed %v", v)
	}
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "sets", "--metrics-file", prom, fleet)
	if r.code == exitComplete {
		t.Fatalf("sets with an unloadable AWS configuration: exit 0")
	}
	if v := metricValue(t, prom, "backup_sets_listed"); v != 0 {
		t.Errorf("sets exited %d (%q), but the metrics file still says backup_sets_listed %v (the last listing's)", r.code, r.stderr, v)
	}
}
