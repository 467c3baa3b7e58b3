package backupset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

func TestStatusCheck(t *testing.T) {
	now := t0.Add(2 * time.Hour) // A started 2h ago, B 1h ago
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		maxAge time.Duration
		want   string // "" for healthy
	}{
		{"fresh", nil, 3 * time.Hour, ""},
		{"no max age", nil, 0, ""},
		{"stale", nil, 90 * time.Minute, "LATEST " + nameA + " is 2h old, older than 1h30m"},
		{"stale by minutes", nil, time.Minute, "is 2h old, older than 1m"},
		{"incomplete", func(t *testing.T, dir string) {
			writeRun(t, dir, fakeRun{nameA, format.Incomplete, t0})
		}, 3 * time.Hour, "LATEST " + nameA + " is incomplete"},
		{"incomplete without max age", func(t *testing.T, dir string) {
			writeRun(t, dir, fakeRun{nameA, format.Incomplete, t0})
		}, 0, ""},
		{"in the future", func(t *testing.T, dir string) {
			writeRun(t, dir, fakeRun{nameA, format.Complete, now.Add(time.Hour)})
		}, 3 * time.Hour, "started in the future"},
		{"damaged pointer", pointer(nameA + "\n" + nameB), 3 * time.Hour, "has more than one line"},
		{"missing pointer", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, LatestName))
		}, 0, "is missing, but the set holds 2 runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := twoRuns(t)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			s, err := ReadStatus(t.Context(), Folder{dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Entries) != 2 {
				t.Errorf("%d entries, want 2", len(s.Entries))
			}
			err = s.Check(now, tt.maxAge)
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check: %v; want %q", err, tt.want)
			}
		})
	}
}

func TestStatusEmpty(t *testing.T) {
	s, err := ReadStatus(t.Context(), Folder{filepath.Join(t.TempDir(), "never-created")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(time.Now(), time.Hour); !errors.Is(err, ErrNoBackup) {
		t.Errorf("Check of an empty set: %v, want ErrNoBackup", err)
	}
}
