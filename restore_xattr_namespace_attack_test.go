package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackXattrOtherNamespace: a manifest recording an attribute outside the namespaces
// backup reads (user.*, the POSIX ACLs, security.*, trusted.*), system.cifs_ntsd_full, the
// whole Windows security descriptor of a file on a CIFS mount (its owner among it). restore
// --xattrs set it as it sets user.*, without --same-permissions: on such a DEST it would
// give a file another owner than the rules for owners allow (--no-same-owner, or not as
// root). backup never records such an attribute; one that is recorded follows the setuid
// rule, as security.* and trusted.* do.
func TestAttackXattrOtherNamespace(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("the rule for privileged attributes is root's")
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "f\n"}})
	plain := filepath.Join(dir, "plain.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--xattrs", "-o", plain, "src/app"), exitComplete)
	arch := filepath.Join(dir, "ns.zip")
	rewriteManifest(t, plain, arch, func(m map[string]any) {
		for _, f := range manifestFiles(t, m) {
			f["xattrs"] = map[string]any{"system.cifs_ntsd_full": "AQAEhA==", "user.ok": "eQ=="}
		}
	})
	r := backup(t, runOpts{dir: dir}, "restore", "--xattrs", arch, filepath.Join(dir, "dest"))
	mustExit(t, r, exitComplete)
	want := "warning: app/f: system.cifs_ntsd_full not set: only with --same-permissions, as root, with the recorded owner"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q: want %q", r.stderr, want)
	}
}
