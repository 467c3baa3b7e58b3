package backupset

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"backup/format"
)

// writeSameSecond writes n complete runs of one source that started in one second, and
// returns their names in the order they ran: create names them with ArchiveName, X, X-2,
// X-3… (and X-10 sorts before X-2 byte by byte).
func writeSameSecond(t *testing.T, dir string, n int) []string {
	t.Helper()
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var names []string
	for i := 1; i <= n; i++ {
		name := ArchiveName("app", started, i)
		writeRun(t, dir, fakeRun{name, format.Complete, started})
		names = append(names, name)
	}
	return names
}

func TestScanOrdersRunsOfOneSecond(t *testing.T) {
	dir := t.TempDir()
	names := writeSameSecond(t, dir, 11)
	entries, err := Scan(t.Context(), Folder{dir})
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
	names := writeSameSecond(t, dir, 3)
	writeFile(t, filepath.Join(dir, LatestName), names[2]+"\n")
	l, err := Acquire(t.Context(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := l.Prune(t.Context(), Policy{Last: 2}, false); err != nil {
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

// TestArchiveNameHasNoFolder: a name with a slash is a file of another folder (a deeper
// set in a bucket), never an archive of this set; nor is one with a newline.
func TestArchiveNameHasNoFolder(t *testing.T) {
	for _, name := range []string{"sub/big-20260101T000000Z.zip", "a/b/app-20260101T000000Z-2.zip", "/app-20260101T000000Z.zip",
		"x\nbackup: complete-20260101T000000Z.zip"} { // and, as before, no newline
		if src := SourceOf(name); src != "" {
			t.Errorf("SourceOf(%q) = %q, want none", name, src)
		}
	}
}

// TestNextRunPassesFreedNames: after prune deleted X and X-2 of one second but kept X-3, a new
// run of that second is X-4, not X again, which would sort before X-3.
func TestNextRunPassesFreedNames(t *testing.T) {
	started := time.Date(2026, 11, 30, 12, 0, 0, 500, time.UTC)
	name := func(source string, n int) string { return ArchiveName(source, started, n) }
	tests := []struct {
		desc  string
		names []string
		want  int
	}{
		{"empty folder", nil, 1},
		{"first pruned, third kept", []string{name("app", 3), name("app", 3) + format.ReceiptSuffix, LatestName}, 4},
		{"only a receipt left", []string{name("app", 2) + format.ReceiptSuffix}, 3},
		{"another source", []string{name("app-x", 5), name("ap", 7)}, 1},
		{"another second", []string{ArchiveName("app", started.Add(time.Second), 4)}, 1},
		{"X-10 after X-9", []string{name("app", 9), name("app", 10), name("app", 1)}, 11},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := NextRun(tt.names, "app", started); got != tt.want {
				t.Errorf("NextRun(%q) = %d, want %d", tt.names, got, tt.want)
			}
		})
	}
}
