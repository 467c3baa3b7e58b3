package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackSQLiteStagingFolderMissingSaysComplete: a run streamed to stdout stages its
// snapshots in $TMPDIR, here a folder that does not exist (a typo in a cron line, a tmpfs
// not mounted yet). The database could not be staged, so it is not in the archive; but the
// error said "no such file or directory", which the receipt took for the database having
// vanished during the run: op vanished, lost false, status complete, exit 0, "0 files" and
// no line naming it. A nightly backup without the database, reported as a success.
//
// Expected: the database is lost (op snapshot, lost true), exit 3, and the line names the
// staging folder.
func TestAttackSQLiteStagingFolderMissingSaysComplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(dir, "app", "state.db"), "delete")
	addRows(t, db, 3, 100)
	tmp := filepath.Join(dir, "no-such-tmp")
	receipt := filepath.Join(dir, "r.json")
	r := backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + tmp}}, "create", "-o", "-", "--receipt", receipt, "app")
	mustExit(t, r, exitIncomplete)
	rc := readReceipt(t, receipt)
	if got, want := warningsOf(rc), []string{"app/state.db snapshot lost=true"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if !strings.Contains(r.stderr, "lost app/state.db: snapshot: ") || !strings.Contains(r.stderr, tmp) {
		t.Errorf("stderr %q, want app/state.db lost, naming %s", r.stderr, tmp)
	}
}
