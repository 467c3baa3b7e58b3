package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackCreatedConflictSaysReplace: an archive whose manifest lists, as "created" (the
// record a before-state's undo removes), paths that DEST holds and the archive does not:
// app/.keep, an empty file anyone can name by its SHA-256. restore without --force refuses
// with "app/.keep: exists in the destination (use --force to replace it)", but --force does
// not replace it: it removes it (and with --no-undo for good). The line must say so.
func TestAttackCreatedConflictSaysReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	empty := sha256.Sum256(nil)
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		m["created"] = []any{map[string]any{"path": "app/.keep", "type": "file", "size": 0, "sha256": hex.EncodeToString(empty[:])}}
	})
	dest := filepath.Join(dir, "dest")
	if err := os.MkdirAll(filepath.Join(dest, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "app/.keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "restore", hostile, dest)
	mustExit(t, r, exitFailed)
	line := ""
	for l := range strings.Lines(r.stderr) {
		if strings.HasPrefix(l, "app/.keep: ") {
			line = l
		}
	}
	if line == "" || strings.Contains(line, "replace") || !strings.Contains(line, "remove") {
		t.Errorf("the line for app/.keep does not say --force removes it:\n%s", r.stderr)
	}
}
