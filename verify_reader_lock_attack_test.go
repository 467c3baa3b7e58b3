package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttackVerifyArchiveLockedByReader: root's archive out.zip (0644, in a root 0755
// folder) may be read by nobody, who may open it and hold `flock -x` on it without writing
// anything. `verify out.zip` and `adopt SET out.zip` now take a shared flock on the archive
// before reading its receipt, and wait for an exclusive one for up to a minute: root's
// verify printed nothing for 60.0 s, then verified (exit 0), and adopt did the same; every
// verify (a cron job's) and adopt could be held a minute by any user who may read the archive.
// Correct: a holder who cannot replace the archive (not root, not the owner of its folder,
// the folder not group- or world-writable) is no Publish swapping the pair: it is not
// waited for, and verify and adopt end at once (exit 0).
func TestAttackVerifyArchiveLockedByReader(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	dir := sharedTempDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"who": {content: "first\n"}})
	out := filepath.Join(dir, "out.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"), exitComplete)
	for _, name := range []string{out, out + ".receipt.json"} {
		if err := os.Chmod(name, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(out, &st); err != nil {
		t.Fatal(err)
	}
	holder := holdAsNobody(t, st.Ino, "flock", "-x", out, "sleep", "150")
	defer killGroup(holder)

	start := time.Now()
	v := backup(t, runOpts{dir: dir}, "verify", "-q", out)
	if took := time.Since(start); v.code != exitComplete || took > 10*time.Second {
		t.Errorf("verify while nobody holds flock -x on the archive: exit %d after %.1f s, %s; want 0 at once", v.code, took.Seconds(), v.stderr)
	}
	start = time.Now()
	a := backup(t, runOpts{dir: dir}, "adopt", filepath.Join(dir, "set"), out)
	if took := time.Since(start); a.code != exitComplete || took > 10*time.Second {
		t.Errorf("adopt while nobody holds flock -x on the archive: exit %d after %.1f s, %s; want 0 at once", a.code, took.Seconds(), a.stderr)
	}
}
