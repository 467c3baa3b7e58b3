package main

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// makeDatabases lays out app/ with SQLite databases under every kind of name, a .db that is
// not SQLite, a file with an SQLite header that is no database, and sidecar-looking files
// beside each. The live WAL database keeps its -wal and -shm while the test runs.
func makeDatabases(t *testing.T, dir string) {
	t.Helper()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{
		"fake.db":        {content: "not a database\n"},
		"fake.db-wal":    {content: "beside a file that is not a database\n"},
		"orphan.db-wal":  {content: "no database beside me\n"},
		"corrupt.sqlite": {content: "SQLite format 3\x00" + strings.Repeat("\xff", 4000)},
	})
	for _, name := range []string{"history.sqlite", "h.sqlite3", "nosuffix", "rollback.db"} {
		db := openSQLite(t, filepath.Join(app, name), "delete")
		addRows(t, db, 3, 10)
		db.Close()
	}
	live := openSQLite(t, filepath.Join(app, "state.db"), "wal")
	sqlExec(t, live, "PRAGMA wal_autocheckpoint = 0")
	addRows(t, live, 5, 10)
	os.WriteFile(filepath.Join(app, "rollback.db-journal"), nil, 0o644) // a journal left behind
}

// TestSQLiteDetection: databases are found by content whatever their names, stored as
// snapshots (marked in the manifest, counted in the receipt), their sidecars left out; what
// is not SQLite is stored as bytes, sidecar-like names too; a file that looks like SQLite
// but is not a database is lost, never stored raw.
func TestSQLiteDetection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeDatabases(t, dir)
	archive := filepath.Join(dir, "app.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app")
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want %d (the corrupt file is lost)\n%s", r.code, exitIncomplete, r.stderr)
	}
	rc := readReceipt(t, archive+".receipt.json")
	if got, want := warningsOf(rc), []string{"app/corrupt.sqlite snapshot lost=true"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	var excluded []string
	for _, e := range rc.Excluded {
		excluded = append(excluded, e.Path+" "+e.Rule)
	}
	wantExcluded := []string{"app/rollback.db-journal sqlite-sidecar", "app/state.db-shm sqlite-sidecar", "app/state.db-wal sqlite-sidecar"}
	if !slices.Equal(excluded, wantExcluded) {
		t.Errorf("excluded %q, want %q", excluded, wantExcluded)
	}
	if rc.Counts.Snapshots != 5 {
		t.Errorf("receipt counts %d snapshots, want 5", rc.Counts.Snapshots)
	}
	entries := readZip(t, archive)
	var names []string
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{".backup-manifest.json", "app/", "app/fake.db", "app/fake.db-wal", "app/h.sqlite3",
		"app/history.sqlite", "app/nosuffix", "app/orphan.db-wal", "app/rollback.db", "app/state.db"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %q\nwant %q", names, want)
	}
	if entries["app/fake.db"] != "not a database\n" {
		t.Errorf("app/fake.db stored as %q", entries["app/fake.db"])
	}
	m := readManifest(t, archive)
	for _, f := range m.Files {
		isDB := slices.Contains([]string{"app/h.sqlite3", "app/history.sqlite", "app/nosuffix", "app/rollback.db", "app/state.db"}, f.Path)
		if got := f.Snapshot != nil && f.Snapshot.Kind == "sqlite"; got != isDB {
			t.Errorf("%s: snapshot %+v, want marked: %v", f.Path, f.Snapshot, isDB)
		}
	}
	restored := restoreTo(t, archive)
	if got := checkDB(t, filepath.Join(restored, "app", "state.db")); got.count != 5 {
		t.Errorf("restored state.db holds %d rows, want the 5 committed in its -wal", got.count)
	}
}

// TestSQLiteOffAndDryRun: --dry-run lists the databases it would snapshot; --sqlite off
// stores every file as its bytes, sidecars and the corrupt file included.
func TestSQLiteOffAndDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeDatabases(t, dir)
	r := backup(t, runOpts{dir: dir}, "create", "-n", "app")
	for _, name := range []string{"app/h.sqlite3", "app/history.sqlite", "app/nosuffix", "app/rollback.db", "app/state.db", "app/corrupt.sqlite"} {
		if !strings.Contains(r.stderr, "would snapshot "+name+" ") {
			t.Errorf("dry run does not list %s:\n%s", name, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "would snapshot app/fake.db") {
		t.Errorf("dry run lists app/fake.db, which is not a database:\n%s", r.stderr)
	}
	// --json: the same databases by their stored names, sorted, one not UTF-8 among them.
	if err := os.WriteFile(filepath.Join(dir, "app", "\xff.db"), []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir}, "create", "-n", "--json", "app")
	var rc struct {
		WouldSnapshot []map[string]string `json:"would_snapshot"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rc); err != nil {
		t.Fatalf("dry run --json: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, s := range rc.WouldSnapshot {
		got = append(got, fmt.Sprintf("%s %s %s", s["path"], s["path_b64"], s["kind"]))
	}
	want := []string{"app/corrupt.sqlite  sqlite", "app/h.sqlite3  sqlite", "app/history.sqlite  sqlite", "app/nosuffix  sqlite",
		"app/rollback.db  sqlite", "app/state.db  sqlite", "app/\ufffd.db " + base64.StdEncoding.EncodeToString([]byte("app/\xff.db")) + " sqlite"}
	if !slices.Equal(got, want) {
		t.Errorf("dry run --json would_snapshot %q, want %q", got, want)
	}
	archive := filepath.Join(dir, "raw.zip")
	r = backup(t, runOpts{dir: dir}, "create", "--sqlite", "off", "-o", archive, "app")
	if r.code != exitComplete {
		t.Fatalf("--sqlite off: exit %d, want %d\n%s", r.code, exitComplete, r.stderr)
	}
	entries := readZip(t, archive)
	for _, name := range []string{"app/state.db-wal", "app/state.db-shm", "app/corrupt.sqlite", "app/rollback.db-journal"} {
		if _, ok := entries[name]; !ok {
			t.Errorf("--sqlite off: %s not stored", name)
		}
	}
	if rc := readReceipt(t, archive+".receipt.json"); rc.Counts.Snapshots != 0 || len(rc.Excluded) != 0 {
		t.Errorf("--sqlite off: %d snapshots, excluded %v; want none", rc.Counts.Snapshots, rc.Excluded)
	}
}

// readManifest reads the archive's manifest.
func readManifest(t *testing.T, path string) *format.Manifest {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open(format.ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := format.ParseManifest(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSQLiteSameBytesWhateverTheJobs: with the same databases, the archive is byte for byte
// the same for -j 1 and -j 4.
func TestSQLiteSameBytesWhateverTheJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}, "z.txt": {content: "z"}})
	for i, mode := range []string{"wal", "delete", "wal"} {
		db := openSQLite(t, filepath.Join(app, fmt.Sprintf("db%d", i)), mode)
		addRows(t, db, 50, 2000)
		db.Close()
	}
	var archives [][]byte
	for _, jobs := range []string{"1", "4"} {
		archive := filepath.Join(dir, "j"+jobs+".zip")
		if r := backup(t, runOpts{dir: dir}, "create", "-j", jobs, "-o", archive, "app"); r.code != exitComplete {
			t.Fatalf("-j %s: exit %d\n%s", jobs, r.code, r.stderr)
		}
		data, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("the archives of -j 1 and -j 4 differ")
	}
}
