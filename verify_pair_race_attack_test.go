package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAttackVerifyRacingForceOutput: `create --force -o X` swaps in its archive, then its
// receipt (two RENAME_EXCHANGEs, both files flock'ed from before the first to the end, so
// that two such runs take turns). `verify X` read X.receipt.json, then opened X, taking no
// turn: held by strace just after its archive's exchange, the run left the new archive
// beside the old receipt, and a verify started then failed a good backup (exit 1, "archive
// is 975 bytes, the receipt says 778"; by hand, verify held at its open of X while the run
// swapped the pair did the same). Once the run ended, verify passed.
// Correct: verify reads an archive and a receipt of one run: it takes its turn with the
// swap as another Publish would (a shared flock on the archive it then reads) and exits 0.
func TestAttackVerifyRacingForceOutput(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir, out, wait := forceSwapping(t)

	v := backup(t, runOpts{dir: dir}, "verify", out)
	wait()
	if v.code != exitComplete {
		t.Errorf("verify while create --force swapped the pair: exit %d, %s; want 0 (one run's archive and receipt)", v.code, v.stderr)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-q", out), exitComplete)
}

// TestAttackAdoptRacingForceOutput: `adopt SET X` read X.receipt.json, then opened X; held
// as above, `create --force -o X` left its new archive beside the old receipt, and adopt
// refused a good backup (exit 1, "does not verify against receipt …; nothing copied").
// Correct: adopt checks an archive and a receipt of one run, as verify does: exit 0, the
// set holds the new archive.
func TestAttackAdoptRacingForceOutput(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir, out, wait := forceSwapping(t)

	r := backup(t, runOpts{dir: dir}, "adopt", filepath.Join(dir, "set"), out)
	wait()
	if r.code != exitComplete {
		t.Errorf("adopt while create --force swapped the pair: exit %d, %s; want 0 (one run's archive and receipt)", r.code, r.stderr)
	}
}

// forceSwapping makes dir/out.zip of app, changes app, and starts `create --force -o` over
// it, held by strace just after it swapped in its archive and before its receipt; wait
// waits for that run, which must succeed.
func forceSwapping(t *testing.T) (dir, out string, wait func()) {
	t.Helper()
	dir = t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "first\n"}})
	out = filepath.Join(dir, "out.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"), exitComplete)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "second, longer\n"}, "more": {content: "more\n"}})

	a, aErr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-P", out, "-e", "trace=renameat2",
		"-e", "inject=renameat2:delay_exit=2000000:when=1", binary, "create", "-q", "--force", "-o", out, "app")
	waitFor(t, "the run held after its archive's exchange", inSyscall(a, unix.SYS_RENAMEAT2))
	return dir, out, func() {
		a.Wait()
		if code := a.ProcessState.ExitCode(); code != exitComplete {
			t.Fatalf("create --force: exit %d, %s", code, aErr.String())
		}
	}
}
