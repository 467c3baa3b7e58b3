package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// TestAttackSQLiteSidecarsGivenAsSources backs up an application's folder as its files
// (`backup create -o b.zip app/*`): app.db, app.db-shm and app.db-wal, each a SOURCE, each
// stored under its base name, so side by side at the archive's top. The database was
// snapshotted, but its -wal and -shm were stored raw beside the snapshot, which the rule
// sqlite-sidecar exists to prevent: restored, SQLite replays that -wal onto the snapshot, and
// a -wal read at another instant than the snapshot (a writer checkpointed and committed
// between the two) writes older pages over newer ones. A sidecar SOURCE whose database is
// another SOURCE stored beside it is left out as it would be in a folder; one alone (its
// database not in the run) is an ordinary file.
func TestAttackSQLiteSidecarsGivenAsSources(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	db := walDB(t, filepath.Join(app, "app.db"), 40, 100)
	defer db.Close()

	archive := filepath.Join(dir, "b.zip")
	r := backup(t, runOpts{dir: dir}, "create", "-o", archive, "app/app.db", "app/app.db-shm", "app/app.db-wal")
	mustExit(t, r, exitComplete)
	rc := readReceipt(t, archive+".receipt.json")
	var excluded []string
	for _, e := range rc.Excluded {
		excluded = append(excluded, fmt.Sprintf("%s %s", e.Path, e.Rule))
	}
	if want := []string{"app.db-shm sqlite-sidecar", "app.db-wal sqlite-sidecar"}; !slices.Equal(excluded, want) {
		t.Errorf("excluded %q, want %q", excluded, want)
	}
	dest := restoreTo(t, archive)
	if got := listDir(t, dest); !slices.Equal(got, []string{"app.db"}) {
		t.Errorf("restored %q, want the snapshot alone", got)
	}
	if got := checkDB(t, filepath.Join(dest, "app.db")); got.count != 40 {
		t.Errorf("the restored database holds %d rows, want 40", got.count)
	}

	dry := backup(t, runOpts{dir: dir}, "create", "--dry-run", "--json", "app/app.db", "app/app.db-wal")
	mustExit(t, dry, exitComplete)
	var dryRc format.Receipt
	if err := json.Unmarshal([]byte(dry.stdout), &dryRc); err != nil {
		t.Fatal(err)
	}
	if want := []format.Excluded{{Path: "app.db-wal", Rule: "sqlite-sidecar"}}; !slices.Equal(dryRc.Excluded, want) {
		t.Errorf("--dry-run excluded %v, want %v as the run does", dryRc.Excluded, want)
	}

	alone := filepath.Join(dir, "alone.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", alone, "app/app.db-wal"), exitComplete)
	if got := listDir(t, restoreTo(t, alone)); !slices.Equal(got, []string{"app.db-wal"}) {
		t.Errorf("a -wal given alone restored as %q, want it stored", got)
	}
}

// TestAttackSQLiteLongestNameLost: a database named with 255 bytes, the most a name may
// hold, can have no -wal, -shm or -journal (their names are too long for the file system).
// The run lost it, exit 3, "file name too long", while --dry-run said it would snapshot it:
// looking up its sidecars failed with ENAMETOOLONG, which was taken for an error.
func TestAttackSQLiteLongestNameLost(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	// Rollback-journal: the check below, by SQLite without backup's guard, could not open a
	// WAL database there read-only (it makes a -shm); the snapshot of one is
	// TestTakeDatabaseWithLongestName's.
	db := openSQLite(t, filepath.Join(app, "short.db"), "delete")
	addRows(t, db, 30, 100)
	db.Close()
	name := strings.Repeat("L", 255)
	if err := os.Rename(filepath.Join(app, "short.db"), filepath.Join(app, name)); err != nil {
		t.Fatal(err)
	}
	before := folderState(t, app)
	archive := filepath.Join(dir, "b.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-o", archive, "app"), exitComplete)
	if after := folderState(t, app); !slices.Equal(after, before) {
		t.Errorf("the folder changed:\n%s\nwas:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", name)); got.count != 30 {
		t.Errorf("the restored database holds %d rows, want 30", got.count)
	}
}
