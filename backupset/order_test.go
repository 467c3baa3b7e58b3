package backupset

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"backup/report"
)

// sameSecond names runs of one source that started in one second, in the order they ran:
// create numbers them X, X-2, X-3… (and X-10 sorts before X-2 byte by byte).
func sameSecond(n int) []string {
	base := stamp("app", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	names := []string{base}
	for i := 2; i <= n; i++ {
		names = append(names, base[:len(base)-len(".zip")]+"-"+itoa(i)+".zip")
	}
	return names
}

func TestScanOrdersRunsOfOneSecond(t *testing.T) {
	dir := t.TempDir()
	names := sameSecond(11)
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, name := range names {
		writeRun(t, dir, fakeRun{name, report.Complete, started})
	}
	entries, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("Scan order:\n%v\nwant the order they ran:\n%v", got, names)
	}
}

func TestPruneKeepsTheNewestOfOneSecond(t *testing.T) {
	dir := t.TempDir()
	names := sameSecond(3)
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, name := range names {
		writeRun(t, dir, fakeRun{name, report.Complete, started})
	}
	writeFile(t, filepath.Join(dir, LatestName), names[2]+"\n")
	l, err := Acquire(t.Context(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Prune(Policy{Last: 2}, false); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if kept := exists(filepath.Join(dir, name)); kept != (i > 0) {
			t.Errorf("%s kept: %v, want %v (keep-last 2 keeps the two that ran last)", name, kept, i > 0)
		}
	}
}

// TestArchiveNameParses: every name ArchiveName gives is one the set recognises, with its
// source, its second and its place in that second.
func TestArchiveNameParses(t *testing.T) {
	started := time.Date(2026, 11, 30, 12, 34, 56, 789, time.FixedZone("CET", 3600))
	for _, source := range []string{"app", "my-app-2", "root", "a.b"} {
		for _, n := range []int{1, 2, 9, 10, 123} {
			name := ArchiveName(source, started, n)
			gotSource, gotStamp, ok := parseName(name)
			if !ok || gotSource != source || !gotStamp.Equal(started.Truncate(time.Second)) || runNumber(name) != n {
				t.Errorf("%s: parsed as %q, %v, run %d (ok %v); want %q, %v, run %d",
					name, gotSource, gotStamp, runNumber(name), ok, source, started.Truncate(time.Second), n)
			}
		}
	}
}
