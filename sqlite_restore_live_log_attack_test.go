package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreSnapshotBesideLiveLog: a database snapshot restored where DEST holds
// its -wal (or -journal) of the live database was said complete, and SQLite replayed that
// log into it at its next open: `restore --force` of a backup of 5 rows gave a database of
// the live one's 15, and one whose log held other pages would have been a mix of both.
// Correct: restore refuses the database (exit 1, nothing written) and names the log, which
// only the user, with the application stopped, may move; restored without it, the database
// holds the archive's rows.
func TestAttackRestoreSnapshotBesideLiveLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	db := walDB(t, filepath.Join(app, "s.db"), 5, 100)
	arch := filepath.Join(dir, "b.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	addRows(t, db, 10, 100) // the live database goes on: its -wal holds all 15 rows

	dest := filepath.Join(dir, "dest")
	if err := os.MkdirAll(filepath.Join(dest, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyDB(t, filepath.Join(app, "s.db"), filepath.Join(dest, "app", "s.db"), "-wal")
	wal := filepath.Join(dest, "app", "s.db-wal")
	for _, args := range [][]string{{"restore", "--force", arch, dest}, {"restore", "--force", "--no-undo", arch, dest}} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "holds its -wal") || !exists(wal) {
			t.Errorf("%v beside the live -wal: exit %d, stderr %q, -wal there: %v; want exit 1 naming it, the -wal kept", args, r.code, r.stderr, exists(wal))
		}
	}
	// A log left without its database (the database deleted, its -wal not) is as bad.
	if err := os.Remove(filepath.Join(dest, "app", "s.db")); err != nil {
		t.Fatal(err)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", arch, dest); r.code != exitFailed || !strings.Contains(r.stderr, "holds its -wal") || exists(filepath.Join(dest, "app", "s.db")) {
		t.Errorf("beside a -wal alone: exit %d, stderr %q; want exit 1 naming it, nothing written", r.code, r.stderr)
	}
	// An empty log (a -wal checkpointed with TRUNCATE, journal_mode=TRUNCATE's -journal)
	// holds nothing to replay: no refusal for it.
	if err := os.WriteFile(filepath.Join(dest, "app", "s.db-journal"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(wal, filepath.Join(dir, "moved-wal")); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest), exitComplete)
	if got := checkDB(t, filepath.Join(dest, "app", "s.db")); got.count != 5 {
		t.Errorf("the restored database holds %d rows; want the archive's 5", got.count)
	}
}
