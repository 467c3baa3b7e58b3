package sqlitesnap

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTake snapshots the database BACKUP_BENCH_SQLITE names (make bench-sqlite lays
// out a 1 GiB one) into a folder beside it: the copy and its quick_check, without the
// archive.
func BenchmarkTake(b *testing.B) {
	path := os.Getenv("BACKUP_BENCH_SQLITE")
	if path == "" {
		b.Skip("BACKUP_BENCH_SQLITE names no database")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	src := Source{File: f, Dir: filepath.Dir(path), Name: filepath.Base(path)}
	stage := b.TempDir()
	for b.Loop() {
		s, err := Take(b.Context(), src, Options{Dir: stage})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
