package backupset

import (
	"slices"
	"strings"
	"testing"
	"time"

	"backup/format"
)

// The names of encrypted archives hold no source, parse back, number the runs of one second
// on their own, and are the set's files to scan, prune and clean, beside plain ones.
func TestSealedNames(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	name := ArchiveName(Sealed, t0, 1)
	if name != "20261201T030000Z.zip.age" || ArchiveName(Sealed, t0, 3) != "20261201T030000Z-3.zip.age" {
		t.Fatalf("sealed names %q, %q", name, ArchiveName(Sealed, t0, 3))
	}
	if !IsSealedName(name) || IsSealedName(ArchiveName("app", t0, 1)) || !IsArchiveName(name) || SourceOf(name) != Sealed {
		t.Error("a sealed name is not recognised as one")
	}
	for _, bad := range []string{"app-20261201T030000Z.zip.age", "20261201T030000Z.zip", "20261201T030000Z.age", "x/20261201T030000Z.zip.age", "20261201T030000Z-0.zip.age"} {
		if IsArchiveName(bad) {
			t.Errorf("%q taken for a default name", bad)
		}
	}
	names := []string{"app-20261201T030000Z-4.zip", name, ArchiveName(Sealed, t0, 2) + format.ReceiptSuffix}
	if n := NextRun(names, Sealed, t0); n != 3 {
		t.Errorf("NextRun of the sealed series %d, want 3 (past -2's receipt, whatever app's numbers)", n)
	}
	if n := NextRun(names, "app", t0); n != 5 {
		t.Errorf("NextRun of app %d, want 5", n)
	}
	if !isStaleTemp("."+name+".tmp-123") || !isStaleTemp("."+name+format.ReceiptSuffix+".tmp-9") {
		t.Error("the temp files of an encrypted run are not cleaned")
	}
	if got, err := parsePointer([]byte(name + "\n")); err != nil || got != name {
		t.Errorf("LATEST naming %s: %q, %v", name, got, err)
	}
}

func TestSealedSetScanAndPrune(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	plain := ArchiveName("app", t0, 1)
	writeRun(t, dir, fakeRun{plain, format.Complete, t0})
	var sealed []string
	for i := 1; i <= 3; i++ {
		n := ArchiveName(Sealed, t0.Add(time.Duration(i)*time.Hour), 1)
		writeRun(t, dir, fakeRun{n, format.Complete, t0.Add(time.Duration(i) * time.Hour)})
		sealed = append(sealed, n)
	}
	entries, err := Scan(t.Context(), Folder{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var runs []Run
	for _, e := range entries {
		if e.State() != Complete {
			t.Errorf("%s: %s (%v)", e.Name, e.State(), e.Problem)
		}
		runs = append(runs, Run{Name: e.Name, Source: e.Source, Started: e.Started(), State: e.State()})
	}
	plan := Plan(runs, sealed[2], Policy{Last: 1})
	var deleted []string
	for _, d := range plan {
		if !d.Keep {
			deleted = append(deleted, d.Name)
		}
		if d.Name == plain && (!d.Keep || !strings.Contains(d.Reasons[0], "plaintext")) {
			t.Errorf("the plaintext run: keep %v, %q; want kept as the other kind", d.Keep, d.Reasons)
		}
	}
	if want := sealed[:2]; !slices.Equal(deleted, want) {
		t.Errorf("prune deletes %q, want %q", deleted, want)
	}
}
