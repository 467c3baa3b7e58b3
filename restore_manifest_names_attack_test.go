package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreCompleteWithUnsafeManifestRecord: a manifest that lists a file app/x/ (a
// name no entry can have: restore refuses any entry so named) that the archive lacks. verify
// fails it ("app/x/: in the manifest but missing from the archive"); restore passed over
// the record for its name and said complete, exit 0.
func TestAttackRestoreCompleteWithUnsafeManifestRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	addRecordAs(t, arch, hostile, "files", "app/x/")
	v := backup(t, runOpts{dir: dir}, "verify", hostile)
	mustExit(t, v, exitFailed)
	r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
	if r.code == exitComplete {
		t.Errorf("restore exit 0 (%q), though verify says: %s", strings.TrimSpace(r.stderr), v.stderr)
	}
}
