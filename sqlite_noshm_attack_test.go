package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// folderState lists dir and everything in it (not below) as "NAME ino mtime ctime": what a
// run that only reads must leave as it found it.
func folderState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, name := range append([]string{"."}, listDir(t, dir)...) {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, name), &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s ino=%d mtime=%d ctime=%d size=%d", name, st.Ino, st.Mtim.Nano(), st.Ctim.Nano(), st.Size))
	}
	return out
}

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
	w := openSQLite(t, other, "wal")
	sqlExec(t, w, "PRAGMA wal_autocheckpoint = 0")
	addRows(t, w, 6, 100)
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(other + suffix)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(app, "state.db"+suffix)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	before := folderState(t, app)
	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	if after := folderState(t, app); !slices.Equal(after, before) {
		t.Errorf("the user's folder changed:\n%s\nwas:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	mustExit(t, r, exitComplete)
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "state.db")); got.count != 6 {
		t.Errorf("the restored database holds %d rows, want the 6 committed", got.count)
	}
	if left := spoolsIn(t, dir); len(left) > 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}
