package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackRestoreInterruptedWhileSavingBeforeState: SIGINT while restore --force saves its
// before-state (held at the sync of the before-state's archive). The restore stops with
// nothing changed, exit 130, as docs/restore.md says, but told the user "backup restore:
// before-state: context canceled; nothing restored (--no-undo restores without one)", in
// --json's error too: Go's words for a cancelled context, where every other interrupt of a
// restore says it was interrupted and at what. Found by the race pass (SIGTERM and SIGINT at
// each call of restore --force).
// Correct: "interrupted while saving the before-state; nothing restored (…)".
func TestAttackRestoreInterruptedWhileSavingBeforeState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "new\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest, undo := filepath.Join(dir, "dest"), filepath.Join(dir, "undo")
	makeTree(t, dest, map[string]node{"app/f": {content: "mine\n"}})
	makeTree(t, undo, map[string]node{".": {kind: "dir"}})

	cmd, stderr := heldRun(t, dir, "fsync", "", "restore", "--force", "--json", "--undo-dir", undo, arch, dest)
	code := interruptWhen(t, cmd, "the before-state synced", inSyscall(cmd, unix.SYS_FSYNC))
	const want = "interrupted while saving the before-state; nothing restored (--no-undo restores without one)"
	if code != exitInterrupted || stderr.String() != "backup restore: "+want+"\n" {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitInterrupted, "backup restore: "+want+"\n")
	}
	var out restoreJSON
	if err := json.Unmarshal([]byte(cmd.Stdout.(interface{ String() string }).String()), &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != restoreInterrupted || out.Error != want {
		t.Errorf("--json says %s, %q; want %s, %q", out.Status, out.Error, restoreInterrupted, want)
	}
	if left := listDir(t, undo); len(left) > 0 {
		t.Errorf("the undo folder holds %q", left)
	}
	if got := string(readFile(t, filepath.Join(dest, "app/f"))); got != "mine\n" {
		t.Errorf("app/f holds %q, want the user's file as it was", got)
	}
}
