package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackRestoreSecondSignalHidesUndo: restore --force saved its before-state and is
// replacing DEST/app's files (held as it exchanges app/f2, app/f1 already replaced) when
// SIGINT comes, then a second one (an impatient Ctrl-C Ctrl-C). The second one ended the
// process at once, as documented, but silently: exit 130, nothing on stderr, nothing on
// stdout for --json, DEST half changed, and not a word of the before-state, the only way
// back, whose name the user had to guess in DEST's parent.
// Correct: the process still ends at once, and says first where the before-state is and
// the command that undoes the restore, as a first interrupt's summary does; that command
// gives DEST back as it was.
func TestAttackRestoreSecondSignalHidesUndo(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	src, old := map[string]node{}, map[string]node{}
	for i := 1; i <= 3; i++ {
		src[fmt.Sprintf("f%d", i)] = node{content: fmt.Sprintf("new %d\n", i)}
		old[fmt.Sprintf("f%d", i)] = node{content: fmt.Sprintf("old %d\n", i)}
	}
	makeTree(t, filepath.Join(dir, "src/app"), src)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), old)

	log := filepath.Join(dir, "strace.log")
	// Every rename in app held: strace counts when= per thread, and the race build's
	// second rename on a thread may be f3's, or none.
	cmd, stderr := startIn(t, dir, "strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app"), "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_enter=3000000:when=1+", binary, "restore", "-j1", "--force", "--json", "--undo-dir", dir, arch, dest)
	waitForCall(t, log, func(c string) bool {
		return strings.Contains(c, "renameat2") && strings.Contains(c, ".f2.") && !returned(c)
	})
	child := tracee(t, cmd.Process.Pid)
	for range 2 {
		if err := syscall.Kill(child, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "before-state saved in ") {
		t.Fatalf("a second SIGINT ended restore --force with DEST half changed, and stderr says nothing of the before-state:\n%q", stderr.String())
	}
	r := backup(t, runOpts{dir: dir}, printedUndo(t, stderr.String())...)
	mustExit(t, r, exitComplete)
	for i := 1; i <= 3; i++ {
		assertContent(t, filepath.Join(dest, "app", fmt.Sprintf("f%d", i)), fmt.Sprintf("old %d\n", i))
	}
	if got := listDir(t, filepath.Join(dest, "app")); len(got) != 3 {
		t.Errorf("DEST/app holds %q after the undo, want f1 to f3 only", got)
	}
}

// TestAttackRestoreInterruptedJSONSaysContextCanceled: SIGINT while restore --force --json
// replaces DEST's files (held as it exchanges app/f2). stderr said "interrupted after 1
// files; no partial file left", but --json's error was Go's words for a cancelled context,
// "context canceled", where every other interrupt of a restore gives its own words.
// Correct: --json's error says what stderr says.
func TestAttackRestoreInterruptedJSONSaysContextCanceled(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	src, old := map[string]node{}, map[string]node{}
	for i := 1; i <= 3; i++ {
		src[fmt.Sprintf("f%d", i)] = node{content: fmt.Sprintf("new %d\n", i)}
		old[fmt.Sprintf("f%d", i)] = node{content: fmt.Sprintf("old %d\n", i)}
	}
	makeTree(t, filepath.Join(dir, "src/app"), src)
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), old)

	log := filepath.Join(dir, "strace.log")
	// Every rename in app held: strace counts when= per thread, and the race build's
	// second rename on a thread may be f3's, or none.
	cmd, stderr := startIn(t, dir, "strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app"), "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_enter=1500000:when=1+", binary, "restore", "-j1", "--force", "--json", "--undo-dir", dir, arch, dest)
	waitForCall(t, log, func(c string) bool {
		return strings.Contains(c, "renameat2") && strings.Contains(c, ".f2.") && !returned(c)
	})
	if err := syscall.Kill(tracee(t, cmd.Process.Pid), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var out restoreJSON
	if err := json.Unmarshal([]byte(cmd.Stdout.(*strings.Builder).String()), &out); err != nil {
		t.Fatalf("--json: %v; stderr:\n%s", err, stderr.String())
	}
	if out.Status != restoreInterrupted || !strings.HasPrefix(out.Error, "interrupted after ") || !strings.Contains(stderr.String(), "backup restore: "+out.Error+"\n") {
		t.Errorf("--json says %s, %q; stderr:\n%s", out.Status, out.Error, stderr.String())
	}
}
