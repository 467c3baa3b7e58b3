package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetTargetSwappedForAnotherSetsRun: whoever may write the set put another set's
// run (of the source db) in place of the set's LATEST target (app-….zip), with that run's
// receipt, its path edited to name the file: size, SHA-256 and status all match. verify
// said ok, list listed db's files and restore wrote db/ into DEST, all of the set of app:
// the archive's name says which source it holds, and its entries, which its SHA-256 covers,
// prove which one it holds, as activate already checks. verify, list and restore of the
// set refuse it (exit 1, naming both: list and restore in one line, verify as a problem
// before its FAILED line), and nothing is written in DEST.
func TestAttackSetTargetSwappedForAnotherSetsRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/a.txt": {content: "app\n"}, "db/secret": {content: "db\n"}})
	set, other := filepath.Join(dir, "set"), filepath.Join(dir, "other")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", other, "db"), exitComplete)
	target := filepath.Join(set, readLatest(t, set))
	theirs := filepath.Join(other, readLatest(t, other))
	if err := os.WriteFile(target, readFile(t, theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target+".receipt.json", readFile(t, theirs+".receipt.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	editReceipt(t, target+".receipt.json", func(rc map[string]any) { rc["archive"].(map[string]any)["path"] = target })

	dest := filepath.Join(dir, "dest")
	makeTree(t, dest, map[string]node{".": {kind: "dir"}})
	for _, args := range [][]string{{"verify", set}, {"list", set}, {"restore", set, dest}} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, `"db"`) || !strings.Contains(r.stderr, `"app"`) || (args[0] != "verify" && strings.Count(r.stderr, "\n") != 1) {
			t.Errorf("%s of a set whose target holds another source: exit %d, stderr %q; want %d and one line naming \"db\" and \"app\"", args[0], r.code, r.stderr, exitFailed)
		}
	}
	if got := listDir(t, dest); len(got) != 0 {
		t.Errorf("DEST holds %v after the refused restore, want nothing", got)
	}
}
