package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackSealedRunTmpdirInsideSet: an encrypted run stages its plaintext (SQLite
// snapshots, spilled entries and central directory) in $TMPDIR, never beside the archive,
// since a set's folder may be a network file system. With $TMPDIR inside the set's folder
// (TMPDIR=/mnt/nas/set, a unit's setting) the snapshot of a database was written there in
// clear, as .backup-spool-sqlite-*, for as long as the run worked, and left there by a kill;
// the run said complete. Such a run is now refused (exit 2, one line naming $TMPDIR),
// before anything is staged.
func TestAttackSealedRunTmpdirInsideSet(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "x\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
	if err := os.Mkdir(filepath.Join(set, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, set)
	for _, tmp := range []string{set, filepath.Join(set, "tmp")} {
		r := backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + tmp}}, "create", "-q", "--output-dir", "set", "--recipient", key.recipient, "app")
		if r.code != exitUsage || !strings.Contains(r.stderr, "$TMPDIR") || strings.Count(r.stderr, "\n") != 2 {
			t.Errorf("TMPDIR=%s: exit %d, stderr %q; want 2, naming $TMPDIR", tmp, r.code, r.stderr)
		}
		if got := listDir(t, set); !slices.Equal(got, before) {
			t.Errorf("TMPDIR=%s: the set holds %q; want %q", tmp, got, before)
		}
	}
	// A plain run stages beside its archive anyway.
	mustExit(t, backup(t, runOpts{dir: dir, env: []string{"TMPDIR=" + set}}, "create", "-q", "-o", "plain.zip", "app"), exitComplete)
}
