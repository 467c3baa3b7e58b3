package main

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackReadBackEIOWordedAsDamage: create --verify reads the archive it just wrote back
// before it is renamed into place (a set's read-back is the same code, archive.ReadBack).
// Every read of the temp file fails with EIO from the third on (strace; with --sqlite off
// no file of the source is read with pread64, so only the read-back's reads fail, and Go's
// one read of the cgroup quota at start). The run fails, rightly (exit 1, nothing at the
// final path), but says "not a zip archive, or its central directory is damaged":
// ReadBack turns any error of its walk of the central directory into errNoZip, a read that
// failed included, where backup verify, list, restore and the reference (attack pass 23)
// report a failed read as itself. An operator told the archive backup just wrote is
// damaged looks for a bug; told of an I/O error, at the disk.
//
// Expected: the failed read is reported as one (input/output error), as verify reports
// the same fault, and only damage is worded as damage.
func TestAttackReadBackEIOWordedAsDamage(t *testing.T) {
	mustTool(t, "strace")
	dir := t.TempDir()
	for i := range 30 {
		b := make([]byte, 8<<10)
		rand.Read(b)
		if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "app", "f"+itoa(i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=pread64", "-e", "inject=pread64:error=EIO:when=3+",
		binary, "create", "-q", "--sqlite", "off", "--verify", "-o", filepath.Join(out, "b.zip"), "app")
	cmd.Dir = dir
	r := runCmd(t, cmd)
	if r.code != exitFailed {
		t.Skipf("the read-back did not fail (exit %d): %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "b.zip")); err == nil {
		t.Errorf("an archive at the final path after a failed read-back")
	}
	if strings.Contains(r.stderr, "damaged") || !strings.Contains(r.stderr, "input/output error") {
		t.Errorf("a read-back whose reads fail with EIO is reported as damage, not as the failed read:\n%s", r.stderr)
	}
}
