package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSetInsideSourceArchivesItsOwnBackups: the backup set's folder lies inside the
// SOURCE (create --output-dir app/backups app: a home folder backed up into ~/backups, a
// cron line with the folders swapped). Nothing refuses it, and only this run's archive and
// receipt are left out (rule self): every run stores the set's earlier backups, with their
// receipts, LATEST and the lock file. Each archive then holds the ones before it, which hold
// theirs: even with --keep-last 2 the archive grows by the golden ratio each run (a 100 KB
// source: 0.1, 0.2, 0.4, 0.7, 1.2, 2.0, 3.4, 5.5 MB over 8 runs, about 130 TB by the 30th),
// until the disk is full and every run fails. A bucket set's cache folder inside a SOURCE
// is left out with rule self (docs/reuse.md), as the run's other outputs are; a folder set,
// the largest output of all, is not.
//
// Expected: the folder of the backup set inside a SOURCE is left out of the archive (rule
// self, listed as excluded), or the run refused as a usage error (exit 2); never a run that
// archives the set's own backups.
func TestAttackSetInsideSourceArchivesItsOwnBackups(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/data": {content: strings.Repeat("some data\n", 1000)}})
	set := filepath.Join(dir, "app", "backups")
	var latest string
	for range 3 {
		r := backup(t, runOpts{dir: dir}, "create", "-q", "--keep-last", "2", "--output-dir", set, "app")
		mustExit(t, r, exitComplete)
		latest = filepath.Join(set, readLatest(t, set))
	}
	zr, err := zip.OpenReader(latest)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var own []string
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "app/backups/") && (strings.HasSuffix(f.Name, ".zip") || strings.HasSuffix(f.Name, ".receipt.json")) {
			own = append(own, f.Name)
		}
	}
	if len(own) > 0 {
		t.Errorf("the third run's archive holds the set's own earlier backups %v: each archive holds the ones before it, and the set grows exponentially", own)
	}
}

// TestSetThatIsTheSourceIsRefused: a set that is itself a SOURCE (--output-dir app app, or
// through a symlink) would store its earlier backups in each run, as a set inside a SOURCE
// did: it is refused (exit 2), with nothing written.
func TestSetThatIsTheSourceIsRefused(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"app/data": {content: "data\n"}})
	if err := os.Symlink("app", filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{filepath.Join(dir, "app"), filepath.Join(dir, "lnk")} {
		r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app")
		mustExit(t, r, exitUsage)
		if !strings.Contains(r.stderr, "is a SOURCE: each run would store the backups before it") {
			t.Errorf("--output-dir %s app: %s", set, r.stderr)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, "app")); len(entries) != 1 {
			t.Errorf("--output-dir %s app wrote into the set: %v", set, entries)
		}
	}
}
