package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3RestoreForgedArchive: someone who may write the bucket, but cannot rewrite what
// the receipt records of the archive (its SHA-256), swaps a file's bytes in LATEST's object
// and edits the manifest to agree, keeping its size. A folder set's restore refuses that
// archive by its receipt's SHA-256 (TestRestoreSetForgedArchive); a whole restore of the
// bucket's set fetches every byte of it anyway, so it must refuse it too, before it writes
// anything, and not say complete for bytes the receipt does not vouch for.
func TestAttackS3RestoreForgedArchive(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "good data 1\n"}})
	run := runOpts{dir: dir, env: s.env}
	mustExit(t, backup(t, run, "create", "--output-dir", s.loc, "app"), exitComplete)
	forgeSameSize(t, filepath.Join(s.dir, readLatest(t, s.dir)), "app/f", []byte("EVIL data 1\n"))

	mustExit(t, backup(t, run, "verify", s.loc), exitFailed)
	dest := filepath.Join(dir, "dest")
	r := backup(t, run, "restore", s.loc, dest)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "does not match the receipt") {
		t.Errorf("stderr does not say the archive is not its receipt's:\n%s", r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "app/f")); err == nil {
		t.Errorf("restore wrote the forged file: %q", got)
	}
}
