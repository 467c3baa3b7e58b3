package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackRestoreLockRemovesFolderItDidNotMake: LockDest listed DEST's missing parents by
// Lstat, then made them with MkdirAll, and counted as its own every folder the Lstat had
// found missing: a folder another made in between (here while its mkdirat is held) was
// removed when the restore failed before writing (an archive that is no zip), the other's
// folder gone. Correct: only the folders this restore's mkdir made are removed.
func TestAttackRestoreLockRemovesFolderItDidNotMake(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.zip")
	if err := os.WriteFile(bad, []byte("no zip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(dir, "p")
	dest := filepath.Join(parent, "dest")
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=mkdirat",
		"-e", "inject=mkdirat:delay_enter=1000000:when=1", binary, "restore", bad, dest)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer killGroup(cmd)
	waitForCall(t, log, func(call string) bool { return strings.Contains(call, "mkdirat(") && !returned(call) })
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("restore of a damaged archive: exit %d, stderr %q; want 1", code, stderr.String())
	}
	if _, err := os.Lstat(parent); err != nil {
		t.Errorf("the folder another made while the restore made DEST's parents: %v; want it left", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		t.Error("DEST, which the restore made, was left")
	}
}
