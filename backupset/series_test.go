package backupset

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"backup/format"
)

// TestWitness: LATEST says what a set is while it reads; lost or damaged, the newest run
// does (never "no one", which would open the set to any source and either kind).
func TestWitness(t *testing.T) {
	sealed := ArchiveName(Sealed, t0.Add(2*time.Hour), 1)
	tests := []struct {
		name   string
		latest *string // nil: no LATEST
		runs   bool
		want   Witness
	}{
		{"LATEST reads", ptr(nameA + "\n"), true, Witness{Name: nameA, ByLatest: true}},
		{"LATEST missing", nil, true, Witness{Name: sealed}},
		{"LATEST junk", ptr("junk\n"), true, Witness{Name: sealed}},
		{"empty set", nil, false, Witness{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.runs {
				writeRun(t, dir, fakeRun{nameA, format.Complete, t0})
				writeRun(t, dir, fakeRun{sealed, format.Complete, t0.Add(2 * time.Hour)})
			}
			if tt.latest != nil {
				writeFile(t, filepath.Join(dir, LatestName), *tt.latest)
			} else {
				os.Remove(filepath.Join(dir, LatestName))
			}
			l, err := Acquire(t.Context(), Folder{dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			got, err := l.Witness(t.Context(), nil)
			if err != nil || got != tt.want {
				t.Errorf("Witness: %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
