package sqlitesnap

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hotPair makes, in dir, a database hot.db with a hot journal, and returns its path: a
// writer's database and journal are copied in the middle of a transaction larger than its
// page cache, so that the copies are what a writer killed at that moment leaves, with no
// process holding a lock on them. The database holds 20 committed rows.
func hotPair(t *testing.T, dir string) string {
	t.Helper()
	live := filepath.Join(t.TempDir(), "live.db")
	db := openDB(t, live, "delete")
	insertRows(t, db, 20)
	exec(t, db, "PRAGMA cache_size = 2")
	exec(t, db, "BEGIN")
	for range 300 {
		exec(t, db, "INSERT INTO t (v) VALUES (?)", strings.Repeat("x", 1000))
	}
	hot := filepath.Join(dir, "hot.db")
	for _, suffix := range []string{"", "-journal"} {
		data, err := os.ReadFile(live + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hot+suffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, db, "ROLLBACK")
	return hot
}

// TestTakeRollsBackACopyOfAHotJournal: a database with a hot journal is snapshotted as of
// its last commit, its files left as they were, and nothing left in the staging folder.
func TestTakeRollsBackACopyOfAHotJournal(t *testing.T) {
	dir, stage := t.TempDir(), t.TempDir()
	path := hotPair(t, dir)
	before := readAll(t, path, path+"-journal")
	s, err := Take(t.Context(), source(t, path), Options{Dir: stage})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := countRows(t, s.File); got != 20 {
		t.Errorf("the snapshot holds %d rows, want the 20 committed", got)
	}
	if after := readAll(t, path, path+"-journal"); !bytes.Equal(after, before) {
		t.Error("the database or its journal was written")
	}
	if left, _ := os.ReadDir(stage); len(left) > 0 {
		t.Errorf("left in the staging folder: %v", left)
	}
}

// TestTakeHotJournalRolledBackMeanwhile: a writer that opens the database while its hot
// journal is being copied rolls it back itself; the copy is then not trusted, and the
// database is read again the usual way.
func TestTakeHotJournalRolledBackMeanwhile(t *testing.T) {
	dir, stage := t.TempDir(), t.TempDir()
	path := hotPair(t, dir)
	called := false
	opts := Options{Dir: stage, hotCopied: func() {
		called = true
		allowWrites(t, path)
		db, err := sql.Open("sqlite", uri(path))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		exec(t, db, "INSERT INTO t (v) VALUES ('after')") // rolls back, then commits a row
	}}
	s, err := Take(t.Context(), source(t, path), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !called {
		t.Fatal("the database was not copied with its journal")
	}
	if got := countRows(t, s.File); got != 21 {
		t.Errorf("the snapshot holds %d rows, want 21: the 20 and the writer's", got)
	}
	if left, _ := os.ReadDir(stage); len(left) > 0 {
		t.Errorf("left in the staging folder: %v", left)
	}
}

func readAll(t *testing.T, paths ...string) []byte {
	t.Helper()
	var all []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	return all
}

// TestTakeNeverBlocksOnAFIFO: a -journal swapped for a FIFO after the sidecars were checked,
// just before SQLite opens the database (which opens a -journal there read-only, blocking),
// does not hang the copy: the FIFO is opened for writing, SQLite's open returns, and the
// copy fails. One there from the start is refused before SQLite sees it.
func TestTakeNeverBlocksOnAFIFO(t *testing.T) {
	for _, swapped := range []bool{true, false} {
		t.Run(map[bool]string{true: "swapped", false: "there"}[swapped], func(t *testing.T) {
			dir, stage := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, "r.db")
			db := openDB(t, path, "delete")
			insertRows(t, db, 3)
			db.Close()
			fifo := func() {
				if err := syscall.Mkfifo(path+"-journal", 0o644); err != nil {
					t.Error(err)
				}
			}
			opts := Options{Dir: stage}
			if swapped {
				opts.beforeOpen = fifo
			} else {
				fifo()
			}
			done := make(chan error, 1)
			go func() {
				s, err := Take(t.Context(), source(t, path), opts)
				if err == nil {
					s.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "FIFO") {
					t.Errorf("Take = %v, want an error naming the FIFO", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Take blocked on the FIFO")
			}
			if left, _ := os.ReadDir(stage); len(left) > 0 {
				t.Errorf("left in the staging folder: %v", left)
			}
		})
	}
}
