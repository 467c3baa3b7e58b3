package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackRestoreIntoSetBelowDest restores an archive whose entries are app/LATEST and
// app/x.zip (its SOURCE was named app) into a DEST that holds a backup set's folder, app.
// DEST itself is no set, so the restore went ahead: with --force it replaced the set's
// LATEST outside the set's lock, and without it the new names became files of the set (a
// run, its receipt). Correct: a restore never writes into a backup set's folder: it is
// refused before anything is written (exit 1, one line naming the folder), with or without
// --force, and the set is as it was.
func TestAttackRestoreIntoSetBelowDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f.txt": {content: "f\n"}})
	makeTree(t, filepath.Join(dir, "ev/app"), map[string]node{"LATEST": {content: "junk.zip\n"}, "x.zip": {content: "x\n"}})
	makeTree(t, filepath.Join(dir, "ev2/app"), map[string]node{"app-20200101T000000Z.zip": {content: "x\n"}})
	dest := filepath.Join(dir, "b")
	set := filepath.Join(dest, "app", "deep")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dest, "app"), "src/app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "src/app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ev.zip", "ev/app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ev2.zip", "ev2/app"), exitComplete)
	// ev3.zip holds app/deep/LATEST: the set two levels below DEST.
	makeTree(t, filepath.Join(dir, "ev3/app/deep"), map[string]node{"LATEST": {content: "junk.zip\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ev3.zip", "ev3/app"), exitComplete)
	latest, deepLatest := readLatest(t, filepath.Join(dest, "app")), readLatest(t, set)
	names := func() []string {
		var all []string
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error { all = append(all, p); return nil })
		return all
	}
	before := names()

	for _, args := range [][]string{
		{"restore", "--force", "ev.zip", dest},
		{"restore", "ev2.zip", dest},
		{"restore", "--force", "--no-undo", "ev2.zip", dest},
		{"restore", "--force", "ev3.zip", dest},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		mustExit(t, r, exitFailed)
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(r.stderr, "backup set") || !strings.Contains(r.stderr, "app") {
			t.Errorf("%q: stderr = %q, want one line naming the set's folder", args, r.stderr)
		}
	}
	if got := readLatest(t, filepath.Join(dest, "app")); got != latest {
		t.Errorf("the set's LATEST = %q, want %q", got, latest)
	}
	if got := readLatest(t, set); got != deepLatest {
		t.Errorf("the deeper set's LATEST = %q, want %q", got, deepLatest)
	}
	if after := names(); !slices.Equal(after, before) {
		t.Errorf("the restores changed the tree:\nbefore %q\nafter  %q", before, after)
	}
}
