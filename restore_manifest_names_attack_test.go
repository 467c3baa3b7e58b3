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
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		files := m["files"].([]any)
		rec := map[string]any{}
		for k, v := range files[0].(map[string]any) {
			rec[k] = v
		}
		rec["path"] = "app/x/"
		m["files"] = append(files, rec)
	})
	v := backup(t, runOpts{dir: dir}, "verify", hostile)
	mustExit(t, v, exitFailed)
	r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
	if r.code == exitComplete {
		t.Errorf("restore exit 0 (%q), though verify says: %s", strings.TrimSpace(r.stderr), v.stderr)
	}
}
