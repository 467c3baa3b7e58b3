package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSQLiteReadOnlyFolder runs the binary as nobody over databases in a folder it cannot
// write: a live WAL database with its -shm is snapshotted whole; a clean WAL database (no
// -wal, no -shm) too; and a WAL database whose commits sit in a -wal with no -shm, which
// SQLite cannot read there without making a -shm, is copied with its -wal to the staging
// folder and read there, whole.
func TestSQLiteReadOnlyFolder(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	walDB(t, filepath.Join(app, "live.db"), 7, 100)

	clean := openSQLite(t, filepath.Join(app, "clean.db"), "wal")
	addRows(t, clean, 4, 100)
	clean.Close()

	// torn.db: the main file and a -wal holding commits, copied while their writer has them
	// open, and no -shm.
	other := filepath.Join(t.TempDir(), "w.db")
	walDB(t, other, 6, 100)
	copyDB(t, other, filepath.Join(app, "torn.db"), "-wal")
	before := listDir(t, app)

	out := filepath.Join(dir, "out")
	makeTree(t, out, map[string]node{".": {kind: "dir", mode: 0o777 | os.ModeSticky}})
	archive := filepath.Join(out, "app.zip")
	r := backup(t, runOpts{dir: dir, uid: nobody}, "create", "-o", archive, "app")
	if r.code != exitComplete {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitComplete, r.stderr)
	}
	if _, ok := readZip(t, archive)["app/torn.db-wal"]; ok {
		t.Error("app/torn.db-wal is in the archive")
	}
	restored := filepath.Join(restoreTo(t, archive), "app")
	for name, want := range map[string]int{"live.db": 7, "clean.db": 4, "torn.db": 6} {
		if got := checkDB(t, filepath.Join(restored, name)); got.count != want {
			t.Errorf("restored %s holds %d rows, want %d", name, got.count, want)
		}
	}
	if after := listDir(t, app); !slices.Equal(after, before) {
		t.Errorf("the source folder holds %q after the run, want %q as before", after, before)
	}
	if left := spoolsIn(t, out); len(left) > 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}

// TestSQLiteStagingDiskFull backs up into a backup set on a tmpfs with room for the archives
// but not for a staged copy of the database: the snapshot is a warning (lost), the run is
// incomplete, LATEST and the previous archive stay as they were, and no staged copy is left.
func TestSQLiteStagingDiskFull(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, set, "512k")
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "big.db"), "delete")
	sqlExec(t, db, "INSERT INTO t (v) VALUES (zeroblob(1000))")
	if r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app"); r.code != exitComplete {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	latest, err := os.ReadFile(filepath.Join(set, "LATEST"))
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(set, strings.TrimSpace(string(latest)))
	old, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	// 2 MB of zeros: a few KB in the archive, 2 MB staged.
	sqlExec(t, db, "INSERT INTO t (v) VALUES (zeroblob(2000000))")
	r := backup(t, runOpts{dir: dir}, "create", "--output-dir", set, "app")
	if r.code != exitIncomplete || !strings.Contains(r.stderr, "lost app/big.db: snapshot: ") {
		t.Fatalf("exit %d, want %d and the database lost\n%s", r.code, exitIncomplete, r.stderr)
	}
	assertContent(t, filepath.Join(set, "LATEST"), string(latest))
	assertContent(t, first, string(old))
	if left := spoolsIn(t, set); len(left) > 0 {
		t.Errorf("staged copies left behind: %v", left)
	}
}
