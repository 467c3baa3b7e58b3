package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackSQLiteNoShmMadeBesideDatabase: nobody's WAL database, its commits in a -wal and
// no -shm (a crash that lost it, or files copied in without it), in nobody's folder that
// nobody may not write (mode 0555). Root's run from cron read it through a read-only
// connection, and SQLite, even so, made app/state.db-shm in the user's folder (32 KiB,
// chowned to nobody, who cannot remove it), and the folder's mtime moved: the source was
// written. (Run as nobody, the same database was lost.)
//
// Expected: the database and its -wal are copied as they are into the staging folder and
// recovered there: the snapshot holds all 6 commits, the run is complete, and the folder
// and every file in it keep their names, inodes, sizes, mtimes and ctimes.
func TestAttackSQLiteNoShmMadeBesideDatabase(t *testing.T) {
	mustRoot(t)
	// rollback: the database's header says rollback journal (bytes 18 and 19 are 1), but
	// SQLite reads a -wal beside any database: before, it made the -shm too; with SQLite kept
	// from writing the tree, it was lost ("unable to open database file").
	for _, header := range []string{"wal", "rollback"} {
		t.Run(header, func(t *testing.T) {
			t.Parallel()
			noShm(t, header == "rollback")
		})
	}
}

func noShm(t *testing.T, rollbackHeader bool) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	other := filepath.Join(t.TempDir(), "w.db")
	walDB(t, other, 6, 100)
	copyDB(t, other, filepath.Join(app, "state.db"), "-wal")
	if rollbackHeader {
		f, err := os.OpenFile(filepath.Join(app, "state.db"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt([]byte{1, 1}, 18)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{app, filepath.Join(app, "a.txt"), filepath.Join(app, "state.db"), filepath.Join(app, "state.db-wal")} {
		if err := os.Lchown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(app, 0o555); err != nil {
		t.Fatal(err)
	}
	createOnlyReads(t, dir, filepath.Join("app", "state.db"), 6)
	if left := spoolsIn(t, dir); len(left) > 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}
