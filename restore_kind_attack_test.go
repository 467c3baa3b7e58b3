package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreCompleteDirRecordedAsFile: the manifest records a folder app/a.txt, and
// the archive holds app/a.txt as a file (a folder's entry swapped for a file's of its name,
// the manifest listing both). verify fails it ("app/a.txt/: directory in the manifest but
// missing from the archive"); restore must not say complete without the folder: it looks
// for each record among the entries of its kind, as verify does.
func TestAttackRestoreCompleteDirRecordedAsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	addRecordAs(t, arch, hostile, "dirs", "app/a.txt")
	v := backup(t, runOpts{dir: dir}, "verify", hostile)
	mustExit(t, v, exitFailed)
	if !strings.Contains(v.stderr, "app/a.txt/: directory in the manifest but missing from the archive") {
		t.Fatalf("verify does not name the folder missing:\n%s", v.stderr)
	}
	r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
	if r.code == exitComplete {
		t.Errorf("restore exit 0 (%q), though the folder app/a.txt the manifest records is not in the archive", strings.TrimSpace(r.stderr))
	}
}
