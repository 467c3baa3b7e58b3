package main

import (
	"database/sql"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestAttackKilledEncryptedRunLeavesPlaintextInTMPDIR: an encrypted run stages its SQLite
// snapshots in $TMPDIR (plaintext must not go beside the archive), under a name for as long
// as SQLite writes the copy. Killed then (SIGKILL, an OOM kill, a reboot into a /tmp on
// disk), the run leaves the database's plaintext there, and no later run removes it:
// docs/sqlite.md says the next run into a backup set removes what a killed run staged, but a
// set's clean-up reaches its own folder only, and docs/encryption.md that what is staged in
// $TMPDIR is removed on every path out of a run. Found by the race pass: every encrypted
// run killed while it copied a database added a .backup-spool-sqlite-* for good.
// Correct: the next run that stages in $TMPDIR removes the copies no live run holds, and
// never one a live run is writing (here another set's run, waiting for its database's lock
// at the same moment).
func TestAttackKilledEncryptedRunLeavesPlaintextInTMPDIR(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	makeTree(t, tmp, map[string]node{".": {kind: "dir"}})
	env := []string{"TMPDIR=" + tmp}
	for _, app := range []string{"app", "other"} {
		makeTree(t, filepath.Join(dir, app), map[string]node{"a.txt": {content: "a\n"}})
		addRows(t, openSQLite(t, filepath.Join(dir, app, "secret.db"), "delete"), 10, 100)
	}
	staging := func(app string) (*exec.Cmd, func()) {
		unlock := lockDatabase(t, filepath.Join(dir, app, "secret.db"))
		before := spoolsIn(t, tmp)
		cmd, _ := startIn(t, dir, "env", append(env, binary, "create", "-q", "--sqlite-timeout", "60s",
			"--recipient", key.recipient, "--output-dir", filepath.Join(dir, app+"-set"), app)...)
		staged := func() bool {
			return slices.ContainsFunc(spoolsIn(t, tmp), func(s string) bool { return !slices.Contains(before, s) })
		}
		for deadline := time.Now().Add(30 * time.Second); !staged(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the run of %s never staged its snapshot", app)
			}
		}
		return cmd, unlock
	}

	killed, unlock := staging("app")
	killGroup(killed) // SIGKILL: nothing is cleaned up
	unlock()
	left := spoolsIn(t, tmp)
	if len(left) == 0 {
		t.Fatal("the killed run left nothing in $TMPDIR; the test proves nothing")
	}

	live, unlockLive := staging("other")
	mustExit(t, backup(t, runOpts{dir: dir, env: env}, "create", "-q", "--recipient", key.recipient,
		"--output-dir", filepath.Join(dir, "app-set"), "app"), exitComplete)
	now := spoolsIn(t, tmp)
	for _, name := range left {
		if slices.Contains(now, name) {
			t.Errorf("the next run into the set left the killed run's staged copy %s in $TMPDIR (holds %q)", name, now)
		}
	}
	if len(now) == 0 {
		t.Errorf("the next run removed the staged copy of a run still writing it")
	}
	unlockLive()
	if err := live.Wait(); err != nil {
		t.Errorf("the run whose staged copy was there meanwhile: %v", err)
	}
	if now := spoolsIn(t, tmp); len(now) > 0 {
		t.Errorf("$TMPDIR holds %q once every run ended", now)
	}
}

// lockDatabase holds the database at path locked (BEGIN EXCLUSIVE), so that a run's
// snapshot waits with its staged copy made, and returns the function that releases it.
func lockDatabase(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			conn.ExecContext(t.Context(), "ROLLBACK")
			conn.Close()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}
