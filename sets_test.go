package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"backup/backupset"
	"backup/format"
)

// ageLatest moves the start of the backup that LATEST names in the folder set dir back by d,
// in its receipt: what sets and status read a backup's age from.
func ageLatest(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	path := filepath.Join(dir, readLatest(t, dir)) + format.ReceiptSuffix
	rc := readReceipt(t, path)
	rc.StartedAt, rc.FinishedAt = rc.StartedAt.Add(-d), rc.FinishedAt.Add(-d)
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fleetOfFolders lays out sets at several depths below root: web1 (fresh) with a set nested
// in it, web2 (three days old), db (LATEST names a missing archive), new (a lock file and
// nothing else: its first run is going), and an attic (archives alone: no set).
func fleetOfFolders(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := t.TempDir()
	makeTree(t, filepath.Join(src, "app"), map[string]node{"a": {content: "a\n"}})
	for _, set := range []string{"hosts/web1", "hosts/web1/nested", "hosts/web2", "hosts/db"} {
		mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--output-dir", filepath.Join(root, set), "app"), exitComplete)
	}
	ageLatest(t, filepath.Join(root, "hosts/web2"), 72*time.Hour)
	db := filepath.Join(root, "hosts/db")
	if err := os.Remove(filepath.Join(db, readLatest(t, db))); err != nil {
		t.Fatal(err)
	}
	makeTree(t, filepath.Join(root, "hosts/new"), map[string]node{".backup.lock": {content: ""}})
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "-o", filepath.Join(root, "attic"), "app"), exitComplete)
	return root
}

// setsColumn returns the first and last column of each line of sets' table after its header:
// the health and the set.
func setsColumn(out string) []string {
	var rows []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if i > 0 && len(f) > 1 {
			rows = append(rows, f[0]+" "+f[len(f)-1])
		}
	}
	return rows
}

// TestSetsFolder runs backup sets over a folder of sets at several depths: one line per set
// found (the attic is none), worst first, a line on stderr naming each unhealthy set, exit 1
// while any is; --max-age makes the old one stale; a subfolder shows only its own sets.
func TestSetsFolder(t *testing.T) {
	t.Parallel()
	root := fleetOfFolders(t)
	at := func(set string) string { return filepath.Join(root, set) }

	r := backup(t, runOpts{}, "sets", root)
	mustExit(t, r, exitFailed)
	want := []string{"damaged " + at("hosts/db"), "missing " + at("hosts/new"), "ok " + at("hosts/web2"),
		"ok " + at("hosts/web1"), "ok " + at("hosts/web1/nested")}
	if got := setsColumn(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sets:\n%s\nwant the rows %q", r.stdout, want)
	}
	if n := strings.Count(r.stderr, "\n"); n != 2 || !strings.Contains(r.stderr, at("hosts/db")+"/LATEST: names") ||
		!strings.Contains(r.stderr, "no backup in "+at("hosts/new")+" yet") {
		t.Errorf("stderr %q; want one line for each unhealthy set, naming it", r.stderr)
	}
	if !strings.Contains(r.stdout, "  3d  ") || !strings.Contains(r.stdout, "/app  ") {
		t.Errorf("sets shows no age of 3 days, or no source:\n%s", r.stdout)
	}

	r = backup(t, runOpts{}, "sets", "--max-age", "26h", at("hosts/web1"))
	mustExit(t, r, exitComplete)
	if got := setsColumn(r.stdout); len(got) != 2 || !strings.HasPrefix(got[0], "ok ") || r.stderr != "" {
		t.Errorf("sets of hosts/web1: %q, stderr %q; want its two sets, healthy", got, r.stderr)
	}
	os.RemoveAll(at("hosts/db"))
	os.RemoveAll(at("hosts/new"))
	r = backup(t, runOpts{}, "sets", "--max-age", "26h", root)
	mustExit(t, r, exitFailed)
	if got := setsColumn(r.stdout); len(got) != 3 || got[0] != "stale "+at("hosts/web2") ||
		r.stderr != "backup sets: "+at("hosts/web2")+": LATEST "+readLatest(t, at("hosts/web2"))+" is 3d old, older than 1d2h\n" {
		t.Errorf("sets --max-age 26h: %q, stderr %q; want web2 stale, first, and said why", got, r.stderr)
	}
}

// TestSetsJSONAndMetrics: --json prints the rows as an array, and --metrics-file one series
// per set that promtool accepts.
func TestSetsJSONAndMetrics(t *testing.T) {
	t.Parallel()
	mustTool(t, "promtool")
	root := fleetOfFolders(t)
	prom := filepath.Join(t.TempDir(), "sets.prom")
	r := backup(t, runOpts{}, "sets", "--json", "--max-age", "26h", "--metrics-file", prom, root)
	mustExit(t, r, exitFailed)
	var got []setJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	health := map[string]string{}
	for _, s := range got {
		health[strings.TrimPrefix(s.Set, root+"/")] = string(s.Health)
		if s.Healthy != (s.Health == healthOK) || s.Healthy != (s.Reason == "") {
			t.Errorf("%s: health %s, healthy %v, reason %q", s.Set, s.Health, s.Healthy, s.Reason)
		}
		if s.Health == healthOK && (s.Latest == nil || s.Size == nil || *s.Size == 0 || s.Runs != 1 || len(s.Sources) != 1 || s.Status != "complete") {
			t.Errorf("%s: %+v; want LATEST, size, one run, the source, complete", s.Set, s)
		}
	}
	want := map[string]string{"hosts/db": "damaged", "hosts/new": "missing", "hosts/web2": "stale", "hosts/web1": "ok", "hosts/web1/nested": "ok"}
	if len(got) != len(want) || got[0].Health != healthDamaged {
		t.Errorf("--json gave %d sets, the first %s; want %d, damaged first", len(got), got[0].Health, len(want))
	}
	for set, h := range want {
		if health[set] != h {
			t.Errorf("%s: health %q, want %q", set, health[set], h)
		}
	}
	promtoolCheck(t, prom)
	for series, want := range map[string]float64{
		"backup_sets_listed": 1,
		"backup_sets_found":  5,
		`backup_set_healthy{set="` + root + `/hosts/web1"}`:         1,
		`backup_set_healthy{set="` + root + `/hosts/web2"}`:         0,
		`backup_set_healthy{set="` + root + `/hosts/db"}`:           0,
		`backup_set_runs{set="` + root + `/hosts/web1"}`:            1,
		`backup_set_latest_complete{set="` + root + `/hosts/web2"}`: 1,
	} {
		if got := metricValue(t, prom, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if age := metricValue(t, prom, `backup_set_latest_age_seconds{set="`+root+`/hosts/web2"}`); age < 72*3600 {
		t.Errorf("web2's age %v s, want 3 days", age)
	}

	r = backup(t, runOpts{}, "sets", "--metrics-file", prom, filepath.Join(root, "missing"))
	mustExit(t, r, exitFailed)
	promtoolCheck(t, prom)
	if v := metricValue(t, prom, "backup_sets_listed"); v != 0 {
		t.Errorf("a location that cannot be listed: backup_sets_listed %v, want 0", v)
	}
}

// TestSetsTakesNoLock: sets reads a set whose lock a run holds, at once.
func TestSetsTakesNoLock(t *testing.T) {
	t.Parallel()
	root := fleetOfFolders(t)
	set := filepath.Join(root, "hosts/web1")
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: set}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	r := backup(t, runOpts{}, "sets", set)
	mustExit(t, r, exitComplete)
	if got := setsColumn(r.stdout); len(got) != 2 {
		t.Errorf("sets of a locked set: %q", got)
	}
}

// TestSetsUsage: the usage errors (exit 2), a location without sets or that cannot be read
// (exit 1, one line), and outputs that the one check refuses.
func TestSetsUsage(t *testing.T) {
	t.Parallel()
	root := fleetOfFolders(t)
	empty := t.TempDir()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, exitUsage, "want one LOCATION, got 0 arguments"},
		{[]string{root, root}, exitUsage, "want one LOCATION, got 2 arguments"},
		{[]string{"--max-age", "soon", root}, exitUsage, "--max-age"},
		{[]string{"--metrics-file", "", root}, exitUsage, "--metrics-file"},
		{[]string{"s3://"}, exitUsage, "no bucket named"},
		{[]string{"--metrics-file", filepath.Join(root, "hosts/web1/x.prom"), root}, exitUsage, "is inside the backup set " + filepath.Join(root, "hosts/web1")},
		{[]string{empty}, exitFailed, "backup sets: no backup set in " + empty + "\n"},
		{[]string{filepath.Join(root, "missing")}, exitFailed, "backup sets: " + filepath.Join(root, "missing") + ": no such file or directory\n"},
	} {
		r := backup(t, runOpts{}, append([]string{"sets"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || c.code == exitFailed && strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("sets %q: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.stderr)
		}
	}
}

// TestSetsHostileFolder: a set whose LATEST is a FIFO is damaged (read without blocking), and
// a set folder whose name holds a newline and an escape sequence is shown quoted in the
// table and escaped on stderr: no set can forge a line of sets' output or drive a terminal.
func TestSetsHostileFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src := t.TempDir()
	makeTree(t, filepath.Join(src, "app"), map[string]node{"a": {content: "a\n"}})
	evil := filepath.Join(root, "x\nbackup sets: all fine\x1b[2J")
	fifo := filepath.Join(root, "fifo")
	for _, set := range []string{evil, fifo} {
		mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	}
	ageLatest(t, evil, 72*time.Hour)
	os.Remove(filepath.Join(fifo, "LATEST"))
	makeTree(t, fifo, map[string]node{"LATEST": {kind: "fifo"}})
	done := make(chan result)
	go func() { done <- backup(t, runOpts{}, "sets", "--max-age", "1d", root) }()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("sets hangs on a set whose LATEST is a FIFO")
	}
	mustExit(t, r, exitFailed)
	if strings.Count(r.stdout, "\n") != 3 || strings.Count(r.stderr, "\n") != 2 || strings.ContainsAny(r.stdout+r.stderr, "\x1b") ||
		!strings.Contains(r.stdout, strconv.Quote(evil)) {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant a header, two rows and two lines, the name quoted", r.stdout, r.stderr)
	}
	if !strings.HasPrefix(strings.Split(r.stdout, "\n")[1], "damaged ") {
		t.Errorf("the FIFO set is not the first row, damaged:\n%s", r.stdout)
	}
}

// TestAttackDocsMaxAgeZero: docs/sets.md has status and sets with --max-age exit 0 only
// when LATEST is complete and younger than the age given. --max-age 0s (or 0h, 0d: only a
// bare 0 was refused) was taken as no --max-age at all, so a set whose LATEST is incomplete
// and old was healthy, exit 0. No backup is younger than 0s: it is a usage error, as
// --keep-within 0s is.
func TestAttackDocsMaxAgeZero(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "sets", "app")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "-q", "--output-dir", set, filepath.Join(dir, "app")), exitComplete)
	for _, args := range [][]string{
		{"status", "--max-age", "0s", set}, {"status", "--max-age", "0d", set},
		{"sets", "--max-age", "0s", filepath.Join(dir, "sets")}, {"sets", "--max-age", "0h", filepath.Join(dir, "sets")},
	} {
		if r := backup(t, runOpts{}, args...); r.code != exitUsage {
			t.Errorf("backup %s: exit %d, want %d (usage); stderr %q", strings.Join(args, " "), r.code, exitUsage, r.stderr)
		}
	}
}
