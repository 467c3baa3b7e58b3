package backupset

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/format"
)

// TestSweepAttic: the sweep removes what a dead run's journal lists as its own temp names,
// and nothing else: not a name without the journal's token, not the user's files a forged
// record names, not what a live run's (locked) journal lists, not a folder.
func TestSweepAttic(t *testing.T) {
	dir := t.TempDir()
	const dead, live = "deadbeef", "1ive"
	files := map[string]string{
		".a.zip.tmp-" + dead + "-1":  "a dead run's temp",
		".a.zip.tmp-" + dead + "-2":  "", // a folder, below
		".a.zip.tmp-other-1":         "no token of the journal",
		"notes.txt":                  "the user's",
		".b.zip.tmp-" + live + "-1":  "a live run's temp",
		".backup-attic-x.journal.no": "not a journal's name",
	}
	for name, content := range files {
		if content == "" {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeFile(t, filepath.Join(dir, name), content)
	}
	journal := func(token string, names ...string) string {
		data := atticJournalHeader
		for _, n := range names {
			data += n + "\x00"
		}
		path := filepath.Join(dir, atticJournalPrefix+token+atticJournalSuffix)
		writeFile(t, path, data+".cut-short")
		return path
	}
	journal(dead, ".a.zip.tmp-"+dead+"-1", ".a.zip.tmp-"+dead+"-2", ".a.zip.tmp-other-1", "notes.txt", "../escape.tmp-"+dead+"-1")
	livePath := journal(live, ".b.zip.tmp-"+live+"-1")
	f, err := os.Open(livePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	// A run killed before its journal's header leaves it empty: nothing to prove, and gone.
	writeFile(t, filepath.Join(dir, atticJournalPrefix+"cafe"+atticJournalSuffix), "")

	removed := sweepAttic(dir)
	want := []string{atticJournalPrefix + "cafe" + atticJournalSuffix, ".a.zip.tmp-" + dead + "-1", atticJournalPrefix + dead + atticJournalSuffix}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	wantLeft := []string{".a.zip.tmp-" + dead + "-2", ".a.zip.tmp-other-1", ".b.zip.tmp-" + live + "-1",
		atticJournalPrefix + live + atticJournalSuffix, ".backup-attic-x.journal.no", "notes.txt"}
	if !slices.Equal(left, wantLeft) {
		t.Errorf("left %v, want %v", left, wantLeft)
	}
}

// TestAtticCopyTakenBackWhenSyncFails: a copy linked into the attic whose folder then fails
// to sync is this run's copy all the same: when the run cannot move whole, it leaves the
// attic with the rest (before, the error said the run stayed whole in the set and nothing
// of it was in the attic, while the archive's copy stayed there).
func TestAtticCopyTakenBackWhenSyncFails(t *testing.T) {
	set, attic := t.TempDir(), t.TempDir()
	name := stamp("app", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	writeRun(t, set, fakeRun{name: name, status: format.Complete, started: time.Now()})
	entries, err := Scan(t.Context(), Folder{Dir: set})
	if err != nil || len(entries) != 1 {
		t.Fatalf("scan: %v, %v", entries, err)
	}
	syncDir = func(dir string) error {
		if dir == attic {
			return syscall.EIO
		}
		return atomicfile.SyncDir(dir)
	}
	t.Cleanup(func() { syncDir = atomicfile.SyncDir })
	a := &Attic{Dir: attic}
	e := entries[0]
	err = a.copyAll(t.Context(), Folder{Dir: set}, e.Name, []atticFile{{e.Name, e.ETag, ""}, {e.Name + format.ReceiptSuffix, e.ReceiptETag, ""}})
	a.done()
	if err == nil {
		t.Fatal("the move succeeded though the attic could not be synced")
	}
	if got := listDir(t, attic); len(got) != 0 {
		t.Errorf("the attic holds %v after %v; want nothing of the run", got, err)
	}
	if got := listDir(t, set); !slices.Equal(got, []string{name, name + format.ReceiptSuffix}) {
		t.Errorf("the set holds %v, want the run whole", got)
	}
}
