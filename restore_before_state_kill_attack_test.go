package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackRestoreKilledWhileSavingBeforeStateLeavesTemp: SIGKILL (the OOM killer, a second
// Ctrl-C's kill -9) while restore --force writes its before-state, held at the sync of the
// before-state's archive. DEST is unchanged, and the next restore --force works, but the
// half-written archive stayed in the before-state's folder for good
// (".dest-before-restore-TIME.zip.tmp-N", as large as all that the restore replaces): no
// run ever removed it, and each killed run added one.
// Correct: the next restore into DEST removes what a killed run left of its before-state.
func TestAttackRestoreKilledWhileSavingBeforeStateLeavesTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, undo := filepath.Join(dir, "dest"), filepath.Join(dir, "undo")
	makeTree(t, dest, map[string]node{"app/f": {content: "mine\n"}})
	makeTree(t, undo, map[string]node{".": {kind: "dir"}, ".mine.zip.tmp-1": {content: "the user's\n"}})

	cmd, _ := heldRun(t, dir, "fsync", "", "restore", "--force", "--undo-dir", undo, arch, dest)
	waitFor(t, "the before-state synced", inSyscall(cmd, unix.SYS_FSYNC))
	if err := syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := string(readFile(t, filepath.Join(dest, "app/f"))); got != "mine\n" {
		t.Fatalf("app/f holds %q after the kill, want the user's file as it was", got)
	}

	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "--force", "--undo-dir", undo, arch, dest), exitComplete)
	var temps []string
	for _, name := range listDir(t, undo) {
		if strings.Contains(name, ".tmp-") && name != ".mine.zip.tmp-1" {
			temps = append(temps, name)
		}
	}
	if len(temps) > 0 {
		t.Errorf("after the next restore, the undo folder still holds %q, what the killed run left", temps)
	}
	assertContent(t, filepath.Join(undo, ".mine.zip.tmp-1"), "the user's\n")
}
