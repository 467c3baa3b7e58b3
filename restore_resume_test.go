package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRestoreResumesAfterKill kills a restore half-way (SIGKILL, sent by strace as it links
// a file into place), then runs it again without --force: it completes, writes only the
// files the first run had not, counts the others as already present, and DEST equals the
// source.
func TestRestoreResumesAfterKill(t *testing.T) {
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	nodes := map[string]node{"ro": {kind: "dir", mode: 0o555}, "ro/f": {content: "ro", mode: 0o444}}
	const total = 200
	for i := range total - 1 {
		nodes[fmt.Sprintf("d%d/f%03d", i%5, i)] = node{content: strings.Repeat("x", i), mode: 0o640}
	}
	makeTree(t, src, nodes)
	arch := filepath.Join(dir, "a.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-o", arch, "app"); r.code != exitComplete {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	dest := filepath.Join(dir, "dest")
	t.Cleanup(func() { makeWritable(dest) })
	killed := killRestoreHalfway(t, arch, dest)

	r := backup(t, runOpts{dir: dir}, "restore", "--json", arch, dest)
	if r.code != exitComplete {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	var out restoreJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.AlreadyPresent != killed || out.Files != total-killed {
		t.Errorf("rerun: already_present %d, files %d; want %d and %d", out.AlreadyPresent, out.Files, killed, total-killed)
	}
	compareTrees(t, src, filepath.Join(dest, "app"))
}

// killRestoreHalfway runs a restore that strace kills with SIGKILL at a thread's 21st link
// (strace counts per thread, and Go spreads one worker's links over a few), and returns
// how many files are in place; the one being written was unnamed, and nothing of it is left.
func killRestoreHalfway(t *testing.T, arch, dest string) int {
	t.Helper()
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "inject=linkat:signal=SIGKILL:when=21", binary, "restore", "--jobs", "1", arch, dest)
	out, err := cmd.CombinedOutput()
	// strace ends as its tracee did: killed by the same signal.
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); err == nil || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the restore was not killed: %v\n%s", err, out)
	}
	n := countFiles(dest)
	if n == 0 || n >= 200 {
		t.Fatalf("the killed restore wrote %d files; want some, not all", n)
	}
	if temps, _ := filepath.Glob(filepath.Join(dest, "app/*/.*")); len(temps) != 0 {
		t.Fatalf("the killed restore left temp files %v; want none", temps)
	}
	return n
}

// countFiles counts the regular files below root, temp files (dot files) left out.
func countFiles(root string) int {
	n := 0
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}
