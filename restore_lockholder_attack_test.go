package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackRestoreLockTakerGoneReaderHolds: a flock belongs to the open file, not to the
// process that took it, and /proc/locks names only the taker. nobody opened root's DEST in a
// shell (exec 9<DEST), took the lock with flock(1) on that descriptor (flock exits at once)
// and kept the shell running: the pid /proc/locks gave was dead, its uid unknown, and the
// lock was respected: every restore into root's DEST exited 4 for as long as he liked. The
// holders are the processes with the locked file open (their fdinfo lists the lock); all of
// them nobody, the lock is ignored with the warning, as for a lock nobody took himself.
func TestAttackRestoreLockTakerGoneReaderHolds(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	f, st := readableLockFixture(t)
	defer killGroup(holdAsNobody(t, st.Ino, "sh", "-c", `exec 9<"$1" && flock -n 9 && exec sleep 60`, "sh", f.dest))
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	if r.code != exitComplete || !strings.Contains(r.stderr, "which cannot write into it") {
		t.Errorf("restore while nobody's shell holds the lock flock(1) took: exit %d, stderr %q; want 0 and the warning", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(f.dest, "app/a"), "archived a\n")
}

// TestAttackRestoreLockIgnoredTwoRestoresInterleave: nobody holds root's DEST's flock (a
// reader's, ignored with the warning) and two restores into DEST run at once: each ignored
// the lock and went on, and nothing else kept them apart, so the original defect came back
// at nobody's will (the loser's before-state claiming the winner's files). Correct: a
// reader's lock is ignored, but a real restore running in DEST still refuses the second,
// exit 4: root's own lock on DEST, in /run/backup, which no reader can take, keeps them
// apart. The first is held once it has taken that lock.
func TestAttackRestoreLockIgnoredTwoRestoresInterleave(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	mustTool(t, "strace")
	f, st := readableLockFixture(t)
	defer killGroup(holdAsNobody(t, st.Ino, "flock", "-s", f.dest, "sleep", "60"))

	log := filepath.Join(f.dir, "strace.log")
	first := exec.Command("strace", "-f", "-y", "-o", log, "-e", "trace=flock",
		"-e", "inject=flock:delay_exit=1500000", binary, "restore", "--force", "--no-undo", f.arch, f.dest)
	first.Dir = f.dir
	first.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer killGroup(first)
	waitForCall(t, log, func(call string) bool {
		return strings.Contains(call, "flock(") && strings.Contains(call, "</run/backup/restore-") && returned(call)
	})
	r := backup(t, runOpts{dir: f.dir}, "restore", "--force", "--no-undo", f.arch, f.dest)
	first.Wait()
	if r.code != exitLocked || first.ProcessState.ExitCode() != exitComplete {
		t.Errorf("two restores into DEST while nobody holds its flock: first exit %d, second exit %d, stderr %q; want 0 and 4",
			first.ProcessState.ExitCode(), r.code, r.stderr)
	}
	if names, _ := filepath.Glob(fmt.Sprintf("/run/backup/restore-%d-%d.lock", st.Dev, st.Ino)); len(names) != 0 {
		t.Errorf("root's lock on DEST left behind: %v", names)
	}
}
