package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backup/backupset"
	"backup/format"
)

// simulatedRun is one run of a set written by a test: its archive (arbitrary bytes; prune
// reads receipts, never archives) and a receipt that matches it.
type simulatedRun struct {
	started time.Time
	status  format.Status
}

func (r simulatedRun) name() string {
	return "app-" + r.started.UTC().Format("20060102T150405Z") + ".zip"
}

func writeSimulated(t *testing.T, set string, r simulatedRun) {
	t.Helper()
	rc := format.Receipt{Schema: format.ReceiptSchema, Status: r.status, StartedAt: r.started,
		FinishedAt: r.started.Add(time.Minute), Sources: []string{"/srv/app"}}
	if r.status != format.Failed {
		content := "not really a zip: " + r.name()
		makeTree(t, set, map[string]node{r.name(): {content: content}})
		rc.Archive = &format.ArchiveInfo{Path: filepath.Join("/backups", r.name()), Size: int64(len(content))}
		rc.Counts.Files = 3
	}
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	makeTree(t, set, map[string]node{r.name() + ".receipt.json": {content: string(data)}})
}

// TestSetPruneRetention simulates 50 daily runs at 03:00 UTC, 2025-11-01 to 2025-12-20,
// with an incomplete run on Dec 18 and 20 and a failed one on Nov 15, LATEST on Dec 19,
// and files that are not the set's. --keep-daily 7 --keep-monthly 3 keeps Dec 12–19 but the
// 18th (daily #1–#7, Dec 19 also monthly #1), Nov 30 (monthly #2; there is no October), and
// Dec 20 (incomplete, newer than the newest complete). Everything else of the set goes.
func TestSetPruneRetention(t *testing.T) {
	t.Setenv("TZ", "UTC")
	set := t.TempDir()
	first := time.Date(2025, 11, 1, 3, 0, 0, 0, time.UTC)
	day := func(month time.Month, d int) time.Time { return time.Date(2025, month, d, 3, 0, 0, 0, time.UTC) }
	statuses := map[time.Time]format.Status{day(12, 18): format.Incomplete, day(12, 20): format.Incomplete, day(11, 15): format.Failed}
	var runs []simulatedRun
	for i := range 50 {
		r := simulatedRun{started: first.AddDate(0, 0, i), status: format.Complete}
		if s, ok := statuses[r.started]; ok {
			r.status = s
		}
		runs = append(runs, r)
		writeSimulated(t, set, r)
	}
	latest := simulatedRun{started: day(12, 19)}.name()
	foreign := map[string]node{
		"LATEST": {content: latest + "\n"}, "notes.txt": {content: "x"}, "app-latest.zip": {content: "x"},
		"other.zip": {content: "x"}, "app-20251101T030000Z.zip.bak": {content: "x"}, "keep/file": {content: "x"},
		".app-20251221T030000Z.zip.tmp-123": {content: "x"},
		// A default name without a receipt: unknown, kept.
		"app-20251105T030000Z-2.zip": {content: "x"},
	}
	makeTree(t, set, foreign)

	want := []string{".app-20251221T030000Z.zip.tmp-123", "LATEST", "app-20251101T030000Z.zip.bak", "app-20251105T030000Z-2.zip", "app-latest.zip", "keep", "notes.txt", "other.zip"}
	for _, tm := range []time.Time{day(11, 30), day(12, 12), day(12, 13), day(12, 14), day(12, 15), day(12, 16), day(12, 17), day(12, 19), day(12, 20)} {
		name := simulatedRun{started: tm}.name()
		want = append(want, name, name+".receipt.json")
	}
	slices.Sort(want)
	before := leftovers(t, set)
	if len(before) != 50*2-1+len(foreign) {
		t.Fatalf("the simulated set holds %d files", len(before))
	}

	r := backup(t, runOpts{}, "prune", "--keep-daily", "7", "--keep-monthly", "3", "--dry-run", set)
	mustExit(t, r, exitComplete)
	if got := leftovers(t, set, ".backup.lock"); !slices.Equal(got, before) {
		t.Errorf("--dry-run deleted %d files", len(before)-len(got))
	}
	for _, line := range []string{
		"keep          2025-12-19T03:00:00Z  complete    " + latest + "    LATEST, daily #1, monthly #1, newest complete",
		"keep          2025-11-05T03:00:00Z  unknown     app-20251105T030000Z-2.zip  unknown (its receipt is missing), kept",
		"would delete  2025-12-18T03:00:00Z  incomplete  app-20251218T030000Z.zip    superseded by a newer complete backup",
		"keep          2025-11-30T03:00:00Z  complete    app-20251130T030000Z.zip    monthly #2",
		"would delete  2025-11-15T03:00:00Z  failed      app-20251115T030000Z.zip    superseded by a newer complete backup",
		"dry run: would delete 41, keep 10",
	} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("--dry-run output lacks %q:\n%s", line, r.stdout)
		}
	}

	r = backup(t, runOpts{}, "prune", "--keep-daily", "7", "--keep-monthly", "3", "--json", set)
	mustExit(t, r, exitComplete)
	var out pruneJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if out.Deleted != 41 || out.Kept != 10 || len(out.Runs) != 51 {
		t.Errorf("--json: deleted %d, kept %d, %d runs; want 41, 10, 51", out.Deleted, out.Kept, len(out.Runs))
	}
	if got := leftovers(t, set, ".backup.lock"); !slices.Equal(got, want) {
		t.Errorf("after prune the set holds\n%v\nwant\n%v", got, want)
	}
	for name, n := range foreign {
		if n.content == "x" && !strings.Contains(name, "/") {
			assertContent(t, filepath.Join(set, name), "x")
		}
	}
	mustExit(t, backup(t, runOpts{}, "status", set), exitComplete)
}

// TestSetPruneCannotDelete runs prune as nobody on root's set in a folder nobody cannot
// write: it exits 1 naming the lock file it may not open for writing (who cannot write a
// set cannot lock it, see TestAttackUnprivilegedUserHoldsSetLock), and the set stays.
func TestSetPruneCannotDelete(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	set := filepath.Join(sharedTempDir(t), "set")
	old := simulatedRun{started: time.Now().Add(-2 * time.Hour), status: format.Complete}
	latest := simulatedRun{started: time.Now().Add(-time.Hour), status: format.Complete}
	writeSimulated(t, set, old)
	writeSimulated(t, set, latest)
	makeTree(t, set, map[string]node{"LATEST": {content: latest.name() + "\n"}, ".backup.lock": {}})
	if err := os.Chmod(set, 0o755); err != nil {
		t.Fatal(err)
	}
	before := leftovers(t, set)
	r := backup(t, runOpts{uid: nobody}, "prune", "--keep-last", "1", set)
	want := "backup prune: failed: lock " + filepath.Join(set, ".backup.lock") + ": permission denied\n"
	if r.code != exitFailed || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitFailed, want)
	}
	if after := leftovers(t, set); !slices.Equal(after, before) {
		t.Errorf("the set changed:\n%v\nwas\n%v", after, before)
	}
}

func TestSetPruneLocked(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	writeSimulated(t, set, simulatedRun{started: time.Now().Add(-time.Hour), status: format.Complete})
	makeTree(t, set, map[string]node{"LATEST": {content: simulatedRun{started: time.Now().Add(-time.Hour)}.name() + "\n"}})
	// The test holds the lock, as a running backup would; prune exits 4 at once, naming this
	// process, or waits with --wait until the lock is released.
	lock, err := backupset.Acquire(t.Context(), backupset.Folder{Dir: set}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{}, "prune", "--keep-last", "1", set)
	want := "another backup of this set is running, pid " + strconv.Itoa(os.Getpid()) + "\n"
	if r.code != exitLocked || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("prune on a locked set: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitLocked, want)
	}
	// A wait that runs out says so: the same line as an immediate refusal read as if no
	// --wait had been given.
	for _, cmd := range [][]string{{"prune", "--keep-last", "1"}, {"create", "-q", "--output-dir", set, t.TempDir()}} {
		args := append(cmd, "--wait", "1s")
		if cmd[0] == "prune" {
			args = append(args, set)
		}
		r = backup(t, runOpts{}, args...)
		want = "another backup of this set is running, pid " + strconv.Itoa(os.Getpid()) + " (still, after --wait 1s)\n"
		if r.code != exitLocked || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s --wait 1s on a locked set: exit %d, stderr %q; want %d and %q", cmd[0], r.code, r.stderr, exitLocked, want)
		}
	}
	time.AfterFunc(500*time.Millisecond, func() { lock.Release() })
	r = backup(t, runOpts{}, "prune", "--keep-last", "1", "--wait", "30s", set)
	mustExit(t, r, exitComplete)
}

// TestSetStatusMaxAge: status --max-age on a fresh, a stale, an incomplete and a missing
// backup.
func TestSetStatusMaxAge(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name   string
		run    *simulatedRun // nil: an empty set
		maxAge string
		code   int
		want   string // on stdout when healthy, else on stderr
	}{
		{"fresh", &simulatedRun{now.Add(-2 * time.Hour), format.Complete}, "26h", 0, "ok: LATEST app-"},
		{"fresh in days", &simulatedRun{now.Add(-6 * 24 * time.Hour), format.Complete}, "1w", 0, "is complete, 6d old (max 7d)"},
		{"stale", &simulatedRun{now.Add(-30 * time.Hour), format.Complete}, "26h", 1, "is 1d6h old, older than 1d2h"},
		{"incomplete", &simulatedRun{now.Add(-time.Hour), format.Incomplete}, "26h", 1, "is incomplete"},
		{"missing", nil, "26h", 1, "backup status: no backup in "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := t.TempDir()
			if tt.run != nil {
				writeSimulated(t, set, *tt.run)
				makeTree(t, set, map[string]node{"LATEST": {content: tt.run.name() + "\n"}})
			}
			r := backup(t, runOpts{}, "status", "--max-age", tt.maxAge, set)
			out := r.stdout
			if tt.code != 0 {
				out = r.stderr
			}
			if r.code != tt.code || !strings.Contains(out, tt.want) || strings.Count(r.stderr, "\n") > 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", r.code, r.stdout, r.stderr, tt.code, tt.want)
			}
		})
	}
	r := backup(t, runOpts{}, "status", "--max-age", "1h", filepath.Join(t.TempDir(), "never-created"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "no backup in") {
		t.Errorf("a folder that does not exist: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "never-created")); err == nil {
		t.Error("status created the folder")
	}
}

// TestAttackPruneStoppedHidesDeletedArchive: prune deletes a run's archive, then its
// receipt; when the receipt's unlink fails (EIO here, by strace), prune stops and reports
// the runs decided before that one only: "deleted 0, then stopped" (create --keep-*:
// "pruned 0, kept 0"), while the archive is gone from the set. The user is told nothing was
// deleted; status then shows the run as "gone".
// Correct: a run whose archive was deleted is listed as deleted (or as partly deleted, with
// its receipt left), and the count says so.
func TestAttackPruneStoppedHidesDeletedArchive(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir, set, a, _ := newestSet(t)
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(set, a+".receipt.json"),
		"-e", "trace=unlinkat", "-e", "inject=unlinkat:error=EIO:when=1",
		binary, "prune", "--keep-last", "1", set)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if _, err := os.Stat(filepath.Join(set, a)); err == nil {
		t.Fatalf("%s was not deleted; the test needs its archive deleted: %s%s", a, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), a) || strings.Contains(stdout.String(), "deleted 0") {
		t.Errorf("prune deleted the archive %s, but says:\n%s%s", a, stdout.String(), stderr.String())
	}
}

// TestAttackPruneFutureRunEvictsRecent: a run made while its machine's clock was a year
// ahead became LATEST, and the next run (clock fixed) moved LATEST past it, as create does
// for a LATEST dated in the future. The future run is then the "newest complete" backup:
// --keep-within 7d counts from it and deletes every backup of the last days but LATEST, and
// --keep-last 3 gives it a slot.
// Correct: a run dated in the future orders nothing (as for create and status): it is kept,
// and the rules count from the newest run that is not.
func TestAttackPruneFutureRunEvictsRecent(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Second)
	for _, rule := range [][]string{{"--keep-within", "7d"}, {"--keep-last", "5"}, {"--keep-daily", "5"}} {
		t.Run(rule[0], func(t *testing.T) {
			set := t.TempDir()
			var want []string
			for days := 5; days >= 1; days-- {
				r := simulatedRun{started: now.Add(-time.Duration(days) * 24 * time.Hour), status: format.Complete}
				writeSimulated(t, set, r)
				want = append(want, r.name())
			}
			future := simulatedRun{started: now.AddDate(1, 0, 0), status: format.Complete}
			writeSimulated(t, set, future)
			want = append(want, future.name())
			makeTree(t, set, map[string]node{"LATEST": {content: want[4] + "\n"}})
			r := backup(t, runOpts{}, append([]string{"prune"}, append(rule, set)...)...)
			mustExit(t, r, exitComplete)
			for _, name := range want {
				if _, err := os.Stat(filepath.Join(set, name)); err != nil {
					t.Errorf("%s: %v\n%s", name, err, r.stdout)
				}
			}
		})
	}
}

// TestAttackPruneWithinReasonGoDuration: prune --keep-within 7d gives each run it keeps the
// reason "within 168h0m0s", Go's form, where every duration the tool prints is written as
// people write it (format.FormatDuration) and can be given back to the flag.
func TestAttackPruneWithinReasonGoDuration(t *testing.T) {
	t.Parallel()
	set := t.TempDir()
	r := simulatedRun{started: time.Now().Add(-time.Hour), status: format.Complete}
	writeSimulated(t, set, r)
	makeTree(t, set, map[string]node{"LATEST": {content: r.name() + "\n"}})
	out := backup(t, runOpts{}, "prune", "--dry-run", "--keep-within", "1w", set)
	mustExit(t, out, exitComplete)
	if !strings.Contains(out.stdout, "within 7d,") {
		t.Errorf("stdout %q; want the reason \"within 7d\"", out.stdout)
	}
}
