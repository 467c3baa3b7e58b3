package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackForceTempRewrittenBeforeSetgid: what --force replaces is written to a named temp
// file beside it (.NAME.restore-*, root's, 0600), checked, then given its owner, its
// attributes and its mode. Once chowned to its recorded owner (nobody here), that owner
// may open it by its name, and write: the chmod after gave the setgid bit of group 0, which
// nobody is not in, to nobody's bytes, and the restore said complete. The kernel clears the
// bit on a write after the chmod, not on one before it. Every undo (a restore --force
// --same-permissions --xattrs) takes this way too. TestAttackPresentOwnerRewritesBeforeSetgid
// is the same for a file kept in place. The bytes are now read again after the owner and
// mode are given, when they grant something (setuid, setgid, a capability) to an owner
// other than the restoring user: a file written since fails.
func TestAttackForceTempRewrittenBeforeSetgid(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := sharedTempDir(t)
	const good, evil = "#!/bin/sh\necho good\n", "#!/bin/sh\necho EVIL\n"
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"tool": {content: good}})
	os.Chown(filepath.Join(dir, "src/app/tool"), nobody, 0)
	syscall.Chmod(filepath.Join(dir, "src/app/tool"), 0o2755)
	arch := filepath.Join(dir, "t.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"tool": {content: "old tool\n", mode: 0o755}})
	tool := filepath.Join(dest, "app/tool")

	// nobody waits for the temp file's chown, then opens it by its name and writes.
	log := filepath.Join(dir, "strace.log")
	attacker := exec.Command("bash", "-c", `for i in $(seq 3000); do grep -q "fchown(" "$1" 2>/dev/null && break; sleep 0.005; done
for f in "$2"/.tool.restore-*; do printf "$3" >"$f" && exit 0; done; exit 1`, "attacker", log, filepath.Dir(tool), evil)
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var said strings.Builder
	attacker.Stderr = &said
	if err := attacker.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=fchown", "-e", "inject=fchown:delay_exit=1500000:when=1",
		binary, "restore", "--jobs", "1", "--force", "--same-permissions", "--numeric-owner", "--undo-dir", dir, arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	done := make(chan error, 1)
	go func() { done <- attacker.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("nobody could not write the temp file (%v: %s): the attack did not run", err, said.String())
		}
	case <-time.After(5 * time.Second):
		attacker.Process.Kill()
		t.Fatal("nobody never saw the fchown")
	}
	b, _ := os.ReadFile(tool)
	var st syscall.Stat_t
	if err := syscall.Stat(tool, &st); err != nil {
		t.Fatal(err)
	}
	if string(b) == evil && st.Gid == 0 && st.Mode&syscall.S_ISGID != 0 {
		t.Errorf("app/tool is setgid root's group (%d:%d, mode %o) with nobody's bytes %q; restore exit %d:\n%s",
			st.Uid, st.Gid, st.Mode&0o7777, b, cmd.ProcessState.ExitCode(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete {
		t.Errorf("restore: exit %d, want %d (app/tool written during the restore)\n%s", code, exitIncomplete, stderr.String())
	}
}
