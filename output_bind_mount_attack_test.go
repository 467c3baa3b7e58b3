package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackOutputsOneFileThroughBindMount gives create two outputs that are one file not
// made yet, named through a bind mount of its folder (out mounted at mnt): -o out/a.zip
// with --metrics-file mnt/a.zip, or --receipt mnt/a.zip. Neither existed, so no device and
// inode were there to compare, and their paths differ: the metrics (or the receipt) replaced
// the archive they describe, and the run said complete. Correct: a usage error (exit 2)
// naming both, nothing written.
func TestAttackOutputsOneFileThroughBindMount(t *testing.T) {
	mustRoot(t) // mount
	for _, flag := range []string{"--metrics-file", "--receipt"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "src"), map[string]node{"f.txt": {content: "hi\n"}})
			for _, d := range []string{"out", "mnt"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mountOrFail(t, "--bind", filepath.Join(dir, "out"), filepath.Join(dir, "mnt"))

			r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "out/a.zip", flag, "mnt/a.zip", "src")
			if r.code != exitUsage || !strings.Contains(r.stderr, "is also the archive") {
				t.Errorf("exit %d, want %d with %s said to be the archive; stderr:\n%s", r.code, exitUsage, flag, r.stderr)
			}
			if got := listDir(t, filepath.Join(dir, "out")); len(got) > 0 {
				t.Errorf("out holds %q, want nothing written", got)
			}
		})
	}
}

// TestAttackExecBeforeMountJoinsOutputs gives create -o out/a.zip --metrics-file mnt/a.zip
// and an --exec-before hook that bind-mounts out at mnt (a hook may mount what the run
// writes into). The outputs were checked before the hooks ran, when mnt was an empty folder
// of its own: the metrics replaced the archive, and the run said complete. Correct: the
// check again once the hooks ran, the run failed (exit 1) naming both, no archive written.
func TestAttackExecBeforeMountJoinsOutputs(t *testing.T) {
	mustRoot(t) // mount
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"f.txt": {content: "hi\n"}})
	for _, d := range []string{"out", "mnt"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mnt := filepath.Join(dir, "mnt")
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })

	r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "out/a.zip", "--metrics-file", "mnt/a.zip",
		"--exec-before", "mount --bind out mnt", "src")
	if r.code != exitFailed || !strings.Contains(r.stderr, "is also the archive") {
		t.Errorf("exit %d, want %d with --metrics-file said to be the archive; stderr:\n%s", r.code, exitFailed, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/a.zip")); err == nil {
		if data, _ := os.ReadFile(filepath.Join(dir, "out/a.zip")); strings.HasPrefix(string(data), "# HELP") {
			t.Errorf("out/a.zip holds the metrics text, not the archive")
		} else {
			t.Errorf("out/a.zip written")
		}
	}
}
