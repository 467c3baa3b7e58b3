package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/archive"
	"backup/engine"
	"backup/format"
)

// runInto backs up src (stored as "app") into path with SQLite detection as sqlite says,
// reusing from reference when it is not "", commits the archive with a receipt that
// describes it, and returns what the hooks heard and the manifest.
func runInto(t *testing.T, src, path, reference string, sqlite bool) (*log, *format.Manifest) {
	t.Helper()
	var l log
	e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}}, Level: 6,
		SQLite: sqlite, SQLiteTimeout: time.Second, Reference: reference,
		Reuse: archive.ReuseOptions{IgnoreCtime: true}, Output: engine.Output{Path: path}})
	e.Hooks = l.hooks()
	res, err := e.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); err != nil {
		t.Fatal(err)
	}
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: format.Complete, Sources: []string{src},
		Archive: &format.ArchiveInfo{Path: path, Size: res.Sum.Size, SHA256: res.Sum.SHA256},
		Skipped: []format.Skipped{}, Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(format.ReceiptPath(path), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &l, res.Manifest
}

// TestRunDatabasesRecorded: a run that looks for SQLite databases says so in its manifest
// (v3's "databases"), and a later run does not open a file unchanged since such a reference
// to look again. The file is made to begin like a database after the first run, its mtime
// put back and its change time ignored (IgnoreCtime): a run that opened it would take it
// for one and not reuse it; a run from a reference that did not look still does so.
func TestRunDatabasesRecorded(t *testing.T) {
	for _, tt := range []struct {
		name        string
		refSQLite   bool
		wantReused  bool
		wantRecords string
	}{{"reference looked", true, true, format.DatabasesSQLite}, {"reference did not look", false, false, ""}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "app")
			body := strings.Repeat("x", 200)
			tree(t, src, map[string]string{"a": body})
			ref := filepath.Join(dir, "ref.zip")
			_, m := runInto(t, src, ref, "", tt.refSQLite)
			if m.Databases != tt.wantRecords {
				t.Errorf("manifest databases %q, want %q", m.Databases, tt.wantRecords)
			}
			a := filepath.Join(src, "a")
			info, err := os.Stat(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(a, []byte("SQLite format 3\x00"+body[16:]), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(a, info.ModTime(), info.ModTime()); err != nil {
				t.Fatal(err)
			}
			l, _ := runInto(t, src, filepath.Join(dir, "new.zip"), ref, true)
			reused := len(l.files) == 1 && l.files[0].Reused
			if reused != tt.wantReused {
				t.Errorf("a reused: %v, want %v (files %+v, warnings %v)", reused, tt.wantReused, l.files, l.warnings)
			}
		})
	}
}
