package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackManifestDirListedTwice: a manifest that records the folder app twice, the
// second time with mode 0777. A file or symlink listed twice makes the manifest invalid; a
// folder did not: verify failed it ("app/: directory in the manifest but missing from the
// archive", the second record unmatched) while list read it and restore said complete,
// exit 0 (hostile-archive pass). Which record's mode and owner would a reader give app?
func TestAttackManifestDirListedTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		dirs := m["dirs"].([]any)
		again := map[string]any{}
		for k, v := range dirs[0].(map[string]any) {
			again[k] = v
		}
		again["mode"] = 0o40777
		m["dirs"] = append(dirs, again)
	})
	const want = `.backup-manifest.json: manifest is not valid: directory "app" is listed twice`
	for _, cmd := range [][]string{{"verify", hostile}, {"list", hostile}, {"restore", hostile, filepath.Join(dir, "dest")}} {
		r := backup(t, runOpts{dir: dir}, cmd...)
		if r.code != exitFailed || !strings.Contains(r.stderr, want+"\n") {
			t.Errorf("%s: exit %d %q; want %d and %q", cmd[0], r.code, r.stderr, exitFailed, want)
		}
	}
}
