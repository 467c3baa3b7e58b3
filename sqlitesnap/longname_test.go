package sqlitesnap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database whose name is as long as a name may be (255 bytes) can have no -wal, -shm or
// -journal: NAME-wal is too long for the file system. Such a database, made under a shorter
// name and renamed, or one an application opens read-only, is sound; looking for its
// sidecars failed with ENAMETOOLONG, which was taken for an error, and it was lost.
func TestTakeDatabaseWithLongestName(t *testing.T) {
	for _, mode := range []string{"wal", "delete"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			short := filepath.Join(dir, "short.db")
			db := openDB(t, short, mode)
			insertRows(t, db, 12)
			db.Close()
			path := filepath.Join(dir, strings.Repeat("L", 255))
			if err := os.Rename(short, path); err != nil {
				t.Fatal(err)
			}
			stage := t.TempDir()
			s, err := Take(t.Context(), source(t, path), Options{Dir: stage})
			if err != nil {
				t.Fatalf("a sound database with a 255-byte name: %v", err)
			}
			defer s.Close()
			if got := countRows(t, s.File); got != 12 {
				t.Errorf("snapshot holds %d rows, want 12", got)
			}
			emptyDir(t, stage)
		})
	}
}
