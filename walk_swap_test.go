package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mustTool skips a test that needs a tool, except in CI, which installs it (.ci/run): there
// a skip would hide a test that never ran.
func mustTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("this test needs %s, and CI installs it", name)
	}
	t.Skip("needs " + name)
}

// TestCreateDirSwappedForSymlink is the attack of issue 8: while the walk is between the stat
// of app/dir/x and its open, app/dir is moved away and replaced by a symlink to a folder
// outside the source holding a secret x. strace holds the process in that stat long enough
// for the swap. The secret must never reach the archive: the walk reads the original x
// through the directory it opened, and the run is complete with it.
func TestCreateDirSwappedForSymlink(t *testing.T) {
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"app/dir/x":     {content: "in\n"},
		"app/keep.txt":  {content: "kept\n"},
		"outside/x":     {content: "SECRET\n"},
		"outside/other": {content: "SECRET too\n"},
	})
	src, sub := filepath.Join(dir, "app"), filepath.Join(dir, "app", "dir")
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-y", "-o", log, "-e", "inject=newfstatat:delay_exit=1500000",
		"-P", filepath.Join(sub, "x"), "-P", sub,
		binary, "create", "-o", filepath.Join(dir, "b.zip"), src)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The stat of x, whether by its full path or relative to the folder's descriptor.
	waitForLine(t, log, func(l string) bool {
		return strings.Contains(l, "newfstatat(") && (strings.Contains(l, "/dir/x\"") || strings.Contains(l, "/dir>, \"x\""))
	})
	if err := os.Rename(sub, filepath.Join(dir, "dir.orig")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside"), sub); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	if code != exitComplete {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitComplete, stderr.String())
	}
	entries := readZip(t, filepath.Join(dir, "b.zip"))
	for name, content := range entries {
		if strings.Contains(content, "SECRET") {
			t.Errorf("%s holds %q, read from outside the source", name, content)
		}
	}
	if got := entries["app/dir/x"]; got != "in\n" {
		t.Errorf("app/dir/x = %q, want the original %q", got, "in\n")
	}
	if rc := readReceipt(t, filepath.Join(dir, "b.zip.receipt.json")); rc.Status != "complete" || rc.Counts.Files != 2 {
		t.Errorf("receipt: status %s, %d files; want complete, 2 files", rc.Status, rc.Counts.Files)
	}
}

// waitForLine waits until a line of the file at path satisfies match. It is how the test
// learns that the traced process is held in the syscall strace delays: strace writes the
// line before the delay.
func waitForLine(t *testing.T, path string, match func(string) bool) {
	t.Helper()
	for range 3000 {
		if f, err := os.Open(path); err == nil {
			s := bufio.NewScanner(f)
			for s.Scan() {
				if match(s.Text()) {
					f.Close()
					return
				}
			}
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("no matching line in %s:\n%s", path, data)
}
