package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// appendStdout runs the binary in dir with stdout appended (>>) to the file at path, and
// returns its exit code and stderr, and whether the file changed (it is then put back).
func appendStdout(t *testing.T, dir, path string, args ...string) (int, string, bool) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdout = dir, f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Run()
	f.Close()
	after, _ := os.ReadFile(path)
	changed := !bytes.Equal(after, before)
	if changed {
		os.WriteFile(path, before, 0o644)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), changed
}

// TestAttackStdoutIntoStatusSet runs status and sets with stdout appended (>>) to the set's
// LATEST. Their one check says stdout's file may not be inside the set they read, but the
// check's rule for a folder walked up from the output's path, and stdout's file has none
// (the shell opened it): both exited 0 and appended their table to LATEST, which then named
// no archive. Correct: exit 2 with one line, LATEST as it was.
func TestAttackStdoutIntoStatusSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "sets/one", "app"), exitComplete)
	latest := filepath.Join(dir, "sets/one/LATEST")
	for _, args := range [][]string{{"status", "sets/one"}, {"status", "--json", "sets/one"}, {"sets", "sets"}} {
		code, stderr, changed := appendStdout(t, dir, latest, args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || changed {
			t.Errorf("%q >> LATEST: exit %d, stderr %q, LATEST changed %v; want 2, one line, unchanged", args, code, stderr, changed)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "sets/one"), exitComplete)
}
