package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreHomeHoldingSetAgain: a person's home holds a backup set of a project
// (home/alice/backups, made by create --output-dir). Before an upgrade they back up the home
// with -o and restore it into a new folder: complete. Every later restore of it was refused,
// exit 1, "rh/alice/backups, a folder in DEST, is a backup set (it holds .backup.lock): a
// restore never writes into one": the re-run that finishes an interrupted restore (or
// checks a finished one), and restore --force into the original place, though the set was
// as the archive holds it and the restore would write nothing there. The rule is that a
// restore never writes into a set's folder (its LATEST replaced outside its lock, new names
// taken for its runs); a restore that finds every entry below the set already there, as
// recorded, writes nothing into it and completes. One that would write there (the set has
// moved on since: its LATEST differs) is still refused, and the set is left as it is.
func TestAttackRestoreHomeHoldingSetAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	makeTree(t, filepath.Join(home, "alice/proj"), map[string]node{"f": {content: "work\n"}})
	set := filepath.Join(home, "alice/backups")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, filepath.Join(home, "alice/proj")), exitComplete)
	arch := filepath.Join(dir, "home.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, filepath.Join(home, "alice")), exitComplete)

	r := filepath.Join(dir, "r")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", arch, r), exitComplete)
	for _, args := range [][]string{
		{"restore", arch, r},
		{"restore", arch, home},
		{"restore", "--force", "--undo-dir", dir, arch, home},
	} {
		res := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, res, exitComplete)
		if strings.Contains(res.stderr, "warning") {
			t.Errorf("%q warned:\n%s", args, res.stderr)
		}
	}

	// The set moves on: a restore --force would put its old LATEST back. Refused.
	if err := os.WriteFile(filepath.Join(home, "alice/proj/f"), []byte("more work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, filepath.Join(home, "alice/proj")), exitComplete)
	latest := readLatest(t, set)
	res := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, home)
	mustExit(t, res, exitFailed)
	if !strings.Contains(res.stderr, "is a backup set") {
		t.Errorf("restore --force over a set that moved on: stderr %q, want the set's refusal", res.stderr)
	}
	if got := readLatest(t, set); got != latest {
		t.Errorf("the set's LATEST = %q, want %q", got, latest)
	}
}
