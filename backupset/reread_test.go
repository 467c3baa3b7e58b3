package backupset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"backup/format"
)

// pruningStore is a set in which a run moves LATEST from A to B and prunes A just as a
// reader that read LATEST (naming A) looks A up: at the first Stat of A (Latest's lookup;
// Scan stats nothing), or with onRead at the first read of A's receipt (Overlook, whose
// listing answers Stat).
type pruningStore struct {
	Folder
	onRead, done bool
}

func (p *pruningStore) prune(name string, read bool) {
	if p.done || read != p.onRead || name != nameA && name != nameA+format.ReceiptSuffix {
		return
	}
	p.done = true
	os.WriteFile(filepath.Join(p.Dir, LatestName), []byte(nameB+"\n"), 0o644)
	os.Remove(filepath.Join(p.Dir, nameA))
	os.Remove(filepath.Join(p.Dir, nameA+format.ReceiptSuffix))
}

func (p *pruningStore) Stat(ctx context.Context, name string) (Object, error) {
	p.prune(name, false)
	return p.Folder.Stat(ctx, name)
}

func (p *pruningStore) ReadFile(ctx context.Context, name string, limit int64) ([]byte, string, error) {
	p.prune(name, true)
	return p.Folder.ReadFile(ctx, name, limit)
}

// TestReadersRacingPrune: a reader whose LATEST target is pruned between its two reads (no
// lock is taken) reads LATEST again and reports the set as it is, healthy; a target that is
// missing while LATEST still names it stays an error (TestOverlook, corruptions).
func TestReadersRacingPrune(t *testing.T) {
	t.Run("Latest", func(t *testing.T) {
		e, err := Latest(t.Context(), &pruningStore{Folder: Folder{twoRuns(t)}})
		if err != nil || e.Name != nameB {
			t.Errorf("Latest: %s, %v; want %s", e.Name, err, nameB)
		}
	})
	t.Run("ReadStatus", func(t *testing.T) {
		s, err := ReadStatus(t.Context(), &pruningStore{Folder: Folder{twoRuns(t)}})
		if err != nil || s.LatestErr != nil || s.Latest.Name != nameB || len(s.Entries) != 1 {
			t.Fatalf("ReadStatus: %+v, %v; want LATEST %s and its one run", s, err, nameB)
		}
	})
	t.Run("Overlook", func(t *testing.T) {
		dir := twoRuns(t)
		files, err := Folder{dir}.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		o := Overlook(t.Context(), &pruningStore{Folder: Folder{dir}, onRead: true}, files)
		if o.LatestErr != nil || o.Latest == nil || o.Latest.Name != nameB {
			t.Errorf("Overlook: %+v; want LATEST %s", o, nameB)
		}
	})
}
