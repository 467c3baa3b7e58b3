package backupset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	stale := []string{".app-20261129T030000Z.zip.tmp-123", ".app-20261129T030000Z-2.zip.receipt.json.tmp-9",
		".LATEST.tmp-77", ".backup-spool-5"}
	kept := []string{"app-20261129T030000Z.zip", ".other.tmp-1", ".notes.txt.tmp-2", "LATEST", ".app.zip.tmp-3", "x.tmp-4"}
	for _, name := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("LATEST", filepath.Join(dir, ".LATEST.tmp-link")) // not a regular file: kept
	kept = append(kept, ".LATEST.tmp-link", LockName)

	l, err := Acquire(context.Background(), Folder{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	removed, err := l.RemoveStale(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	slices.Sort(stale)
	if !slices.Equal(removed, stale) {
		t.Errorf("removed %q, want %q", removed, stale)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	slices.Sort(kept)
	if !slices.Equal(left, kept) {
		t.Errorf("left %q, want %q", left, kept)
	}
}
