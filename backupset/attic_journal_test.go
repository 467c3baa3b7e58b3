package backupset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
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

	removed := sweepAttic(dir)
	want := []string{".a.zip.tmp-" + dead + "-1", atticJournalPrefix + dead + atticJournalSuffix}
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
