package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackACLQualifiersNotMappedByName: an archive made on a host where bin is uid and gid
// 4242 records app/f as bin's (user and group "bin", 4242:4242) with an ACL granting
// user:4242 rw- and group:4242 r-- (bin, there). Restored as root here, where bin is 2,
// owners are given by name (bin:bin, as GNU tar does) but the ACL was set with the numbers
// it holds: the file became bin's and granted read-write to uid 4242, whoever that is here,
// and nothing to bin. GNU tar --acls stores ACL entries by name and maps them as it maps
// owners. Correct: where owners are restored by name, an ACL entry naming a number the
// manifest records a name for (an owner of one of its entries) is given that name's number
// here; with --numeric-owner the numbers stay.
func TestAttackACLQualifiersNotMappedByName(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "setfacl")
	mustTool(t, "getfacl")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeTree(t, src, map[string]node{"app/f": {content: "bin's\n", mode: 0o600}})
	f := filepath.Join(src, "app/f")
	if err := os.Chown(f, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setfacl", "-m", "u:4242:rw,g:4242:r", f).CombinedOutput(); err != nil {
		t.Skipf("setfacl: %v %s", err, out)
	}
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: src}, "create", "-q", "--xattrs", "-o", arch, "app"), exitComplete)
	there := filepath.Join(dir, "there.zip")
	rewriteManifest(t, arch, there, func(m map[string]any) {
		for _, f := range manifestFiles(t, m) {
			if f["path"] == "app/f" {
				f["user"], f["group"] = "bin", "bin"
			}
		}
	})
	acl := func(dest string) string {
		out, _ := exec.Command("getfacl", "-c", "-n", "-p", filepath.Join(dest, "app/f")).Output()
		return string(out)
	}
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--xattrs", there, dest)
	mustExit(t, r, exitComplete)
	got := acl(dest)
	if !strings.Contains(got, "user:2:rw-") || !strings.Contains(got, "group:2:r--") || strings.Contains(got, "4242") {
		t.Errorf("app/f, bin's by name, has the ACL\n%s\nwant user:2:rw- and group:2:r-- (bin here), nothing for 4242", got)
	}
	// A re-run finds it as restored.
	if again := backup(t, runOpts{dir: dir}, "restore", "--xattrs", there, dest); again.code != exitComplete || !strings.Contains(again.stderr, "1 file already there") {
		t.Errorf("re-run: exit %d, stderr %s", again.code, again.stderr)
	}
	numeric := filepath.Join(dir, "numeric")
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "--xattrs", "--numeric-owner", there, numeric), exitComplete)
	if got := acl(numeric); !strings.Contains(got, "user:4242:rw-") || !strings.Contains(got, "group:4242:r--") {
		t.Errorf("--numeric-owner: app/f has the ACL\n%s\nwant the numbers recorded", got)
	}
}
