package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetsTakesUsersLatestForSet: a fleet's LOCATION (/backups) also held a test
// restore of an application, whose release folder keeps a file of its own named LATEST
// ("v1.2.3"; another site links LATEST -> releases/v2), beside the usual clutter (an attic, a README, lost+found). backup sets listed
// that folder as a damaged set and exited 1 for ever ('…/releases/LATEST: names "v1.2.3",
// which is not an archive name of a set'), so the hourly cron line mailed, and
// backup_set_healthy 0 fired the alert, over a healthy fleet. A LATEST that names no run, in
// a folder that holds no lock file and no run, is a user's file, as the checks of a folder
// that must be no set's already judge it: no set. A set's folder whose LATEST is damaged
// (it holds the lock file, or runs) is still listed damaged.
func TestAttackSetsTakesUsersLatestForSet(t *testing.T) {
	t.Parallel()
	root, src := t.TempDir(), t.TempDir()
	makeTree(t, filepath.Join(src, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--output-dir", filepath.Join(root, "app"), "app"), exitComplete)
	makeTree(t, root, map[string]node{
		"README":                              {content: "backups of this host\n"},
		"lost+found/#1234":                    {content: "x\n"},
		"attic/app-20200101T000000Z.zip":      {content: "x\n"},
		"restore-test/app/releases/LATEST":    {content: "v1.2.3\n"},
		"restore-test/app/releases/v1.2.3/go": {content: "x\n"},
		"empty-latest/LATEST":                 {content: ""},
		"site/LATEST":                         {kind: "symlink", content: "releases/v2"},
	})
	metrics := filepath.Join(t.TempDir(), "sets.prom")
	r := backup(t, runOpts{}, "sets", "--max-age", "1h", "--metrics-file", metrics, root)
	mustExit(t, r, exitComplete)
	if got := setsColumn(r.stdout); len(got) != 1 || got[0] != "ok "+filepath.Join(root, "app") || r.stderr != "" {
		t.Errorf("sets: %q, stderr %q; want the one set, healthy, and nothing said", got, r.stderr)
	}
	if m := string(readFile(t, metrics)); strings.Contains(m, "backup_set_healthy{set=\""+root+"/restore-test") || !strings.Contains(m, "backup_sets_found 1") {
		t.Errorf("metrics:\n%s\nwant one set found, no series of the release folder", m)
	}

	// A set whose LATEST was damaged is still one: by its lock file, or, copied without it, by its runs.
	set := filepath.Join(root, "app")
	if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(root, "copied")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--output-dir", copied, "app"), exitComplete)
	for _, p := range []string{filepath.Join(copied, ".backup.lock")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(copied, "LATEST"), []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{}, "sets", root)
	mustExit(t, r, exitFailed)
	if got := setsColumn(r.stdout); strings.Join(got, "\n") != "damaged "+set+"\ndamaged "+copied {
		t.Errorf("sets: %q; want both damaged sets listed", got)
	}
}
