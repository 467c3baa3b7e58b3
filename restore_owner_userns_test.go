package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRestoreOwnerUnmappedSaysWayOut: root in a container whose user namespace maps no
// other id (unshare --map-root-user here) restores an archive of files owned by uid 4242:
// every chown fails with EINVAL and each such file is not restored (exit 3), by the rule
// that a file takes no other owner than the recorded one unless asked. The line said only
// "chown: invalid argument"; it names --no-same-owner now, and that restores them.
func TestRestoreOwnerUnmappedSaysWayOut(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "hi\n"}})
	if err := os.Chown(filepath.Join(dir, "src/app/f"), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "src/app"), exitComplete)
	inNamespace := func(args ...string) result {
		cmd := exec.Command(binary, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		}
		return runCmd(t, cmd)
	}

	r := inNamespace("restore", "a.zip", "d1")
	mustExit(t, r, exitIncomplete)
	if want := "app/f: chown: invalid argument (--no-same-owner restores without owners) (not restored)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	mustExit(t, inNamespace("restore", "-q", "--no-same-owner", "a.zip", "d2"), exitComplete)
	if got := string(readFile(t, filepath.Join(dir, "d2/app/f"))); got != "hi\n" {
		t.Errorf("d2/app/f = %q", got)
	}
}
