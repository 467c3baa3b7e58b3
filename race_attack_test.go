package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackForceOutputRacingPairsMismatch: two `create --force -o X` at once publish the
// archive and its receipt as two renames each (RENAME_EXCHANGE). A, held by strace just
// after its archive's exchange, lets B exchange its archive and its receipt in and remove
// what they replaced (A's new archive); then A exchanges its receipt in. Both runs exit 0,
// X is B's archive, X.receipt.json is A's receipt, of an archive that is gone: verify fails
// the pair, and A's backup, which A said was written, is nowhere.
// Correct: the pair a run publishes is never split by another run's: the runs take turns,
// and X and its receipt are the last run's, whole; verify passes.
func TestAttackForceOutputRacingPairsMismatch(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "first\n"}})
	out := filepath.Join(dir, "out.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"), exitComplete)

	a := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", out, "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_exit=3000000:when=1", binary, "create", "-q", "--force", "-o", out, "app")
	a.Dir = dir
	a.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var aErr strings.Builder
	a.Stdout, a.Stderr = &strings.Builder{}, &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(a) })
	waitFor(t, "A held after its archive's exchange", inSyscall(a, unix.SYS_RENAMEAT2))

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "second, longer\n"}})
	b := backup(t, runOpts{dir: dir}, "create", "-q", "--force", "-o", out, "app")
	a.Wait()
	if code := a.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("A: exit %d, %s", code, aErr.String())
	}
	mustExit(t, b, exitComplete)
	if r := backup(t, runOpts{dir: dir}, "verify", "-q", out); r.code != exitComplete {
		data, _ := os.ReadFile(out)
		sum := sha256.Sum256(data)
		t.Errorf("both runs exit 0, and the archive and receipt at %s are not a pair (archive sha256 %s): verify exit %d:\n%s",
			out, hex.EncodeToString(sum[:]), r.code, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}
