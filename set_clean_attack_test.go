package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackSetCleanRemovesUsersFiles: a run that holds a set's lock removes the temp files
// killed runs left (backupset.Folder.Clean). Its comment says it matches "only the temp
// names this tool gives ... then .tmp- and a random suffix; or a spool. Any other file in
// the set is never touched", and docs/sqlite.md that "a file of yours whose name only
// begins with .backup-spool- is archived like any other". But isStaleTemp takes any suffix:
// a user's .backup-spool-notes or .LATEST.tmp-mine kept in the set folder is deleted by the
// next run, without a word. The temp names backup makes end in the random number of
// os.CreateTemp's pattern (digits), as the walk's isSpoolName knows.
//
// Expected: only names backup makes (the random suffix all digits; a spool's
// .backup-spool-[sqlite-]DIGITS, with SQLite's -journal beside a staged snapshot) are
// removed; other files in the set folder are left alone.
func TestAttackSetCleanRemovesUsersFiles(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/f": {content: "x\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	users := []string{".backup-spool-notes", ".LATEST.tmp-mine"}
	killed := []string{".backup-spool-123456", ".LATEST.tmp-987654321"}
	for _, n := range append(append([]string{}, users...), killed...) {
		if err := os.WriteFile(filepath.Join(set, n), []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := setRun(t, dir, set)
	mustExit(t, r, exitComplete)
	for _, n := range users {
		if _, err := os.Stat(filepath.Join(set, n)); err != nil {
			t.Errorf("the user's %s in the set folder is gone after a run: %v", n, err)
		}
	}
	for _, n := range killed {
		if _, err := os.Stat(filepath.Join(set, n)); err == nil {
			t.Errorf("a killed run's %s is still in the set", n)
		}
	}
}
