package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSQLiteJournalVanishedFailsStrictRun: a rollback-journal database whose
// application commits all day: its -journal is made and removed with each commit, and the
// walk, which lists the folder and then stats each name, now and then lists it and finds it
// gone. The run warned "vanished" for a file it leaves out whenever it finds it (rule
// sqlite-sidecar): one warning in three runs against a writer committing in a loop, and
// --fail-on vanished (or --strict) made those runs incomplete, exit 3, though the database
// was snapshotted whole and nothing of the tree was missing.
//
// Expected: a sidecar of a database the run snapshots that is gone by the time the walk
// stats it is left out as one that is there would be, without a warning: the run is
// complete under --fail-on vanished.
func TestAttackSQLiteJournalVanishedFailsStrictRun(t *testing.T) {
	mustRoot(t) // strace
	mustTool(t, "strace")
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	db := openSQLite(t, filepath.Join(app, "state.db"), "persist")
	addRows(t, db, 5, 100)
	db.Close()
	journal := filepath.Join(app, "state.db-journal")
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("journal_mode PERSIST left no -journal: %v", err)
	}
	log := filepath.Join(dir, "strace.log")
	archive := filepath.Join(dir, "b.zip")
	cmd := exec.Command("strace", "-f", "-y", "-o", log, "-e", "inject=getdents64:delay_exit=1500000:when=1", "-P", app,
		binary, "create", "--fail-on", "vanished", "-o", archive, app)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the folder is listed, the commit that ends removes its journal.
	waitForCall(t, log, func(call string) bool {
		return strings.Contains(call, "getdents64(") && strings.Contains(call, "/app>") && returned(call)
	})
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Errorf("exit %d, want %d: %s", code, exitComplete, out.String())
	}
	if got := checkDB(t, filepath.Join(restoreTo(t, archive), "app", "state.db")); got.count != 5 {
		t.Errorf("the restored database holds %d rows, want 5", got.count)
	}
}
