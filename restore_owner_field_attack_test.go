package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRestoreCompleteOnOwnerFieldMismatch: a backup whose manifest records another
// owner for app/a.txt and app/sub than their ux fields hold (the fields unzip -X and bsdtar
// restore from). verify fails both ("app/a.txt: owner 0:0, the manifest says 4242:0");
// restore said complete, exit 0, and gave the files the manifest's owner: one archive, two
// verdicts, and two owners by two tools (hostile-archive pass). restore reports them as
// damaged, as it does an entry whose mode differs from the manifest's, and writes neither.
// Into a DEST that held the files already it kept them and set their owner and mode from
// such records, mode ones too: whatever DEST holds, the records are checked first.
func TestAttackRestoreCompleteOnOwnerFieldMismatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	hostile := filepath.Join(dir, "hostile.zip")
	rewriteManifest(t, arch, hostile, func(m map[string]any) {
		for _, f := range manifestFiles(t, m) {
			if f["path"] == "app/a.txt" {
				f["uid"] = 4242
			}
		}
		for _, d := range m["dirs"].([]any) {
			if d := d.(map[string]any); d["path"] == "app/sub" {
				d["gid"] = 4242
			}
		}
	})
	uid, gid := os.Getuid(), os.Getgid()
	want := []string{
		fmt.Sprintf("app/a.txt: owner %d:%d, the manifest says 4242:%d", uid, gid, gid),
		fmt.Sprintf("app/sub/: owner %d:%d, the manifest says %d:4242", uid, gid, uid),
	}
	v := backup(t, runOpts{dir: dir}, "verify", hostile)
	r := backup(t, runOpts{dir: dir}, "restore", hostile, filepath.Join(dir, "dest"))
	for _, w := range want {
		if v.code != exitFailed || !strings.Contains(v.stderr, w+"\n") {
			t.Errorf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, w)
		}
		if r.code != exitFailed || !strings.Contains(r.stderr, w+" (not restored)\n") {
			t.Errorf("restore: exit %d %q; want %d and %q", r.code, r.stderr, exitFailed, w+" (not restored)")
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "dest/app/a.txt")); err == nil {
		t.Error("restore wrote app/a.txt; want it not written")
	}

	present := filepath.Join(dir, "present")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", arch, present), exitComplete)
	r = backup(t, runOpts{dir: dir}, "restore", hostile, present)
	if r.code != exitFailed || !strings.Contains(r.stderr, want[0]+" (not restored)\n") {
		t.Errorf("restore into a DEST holding the files: exit %d %q; want %d and %q", r.code, r.stderr, exitFailed, want[0]+" (not restored)")
	}
}
