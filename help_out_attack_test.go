package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestAttackHelpUnwrittenExitsZero: help that could not be written to stdout (a full disk,
// /dev/full; a closed pipe) exited 0 and said nothing, where backup version, and GNU tools'
// --help, fail: a script that saves the help, or a man page made from it, would take the
// empty file for it. Correct: exit 1 and one line saying stdout failed.
func TestAttackHelpUnwrittenExitsZero(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	for _, args := range [][]string{{"help"}, {"help", "create"}, {"create", "--help"}, {"--help"}, {"prune", "-h"}} {
		cmd := exec.Command(binary, args...)
		cmd.Stdout = full
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != exitFailed || !strings.Contains(stderr.String(), "stdout: no space left on device") || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("backup %s > /dev/full: exit %d, stderr %q; want %d and one line", strings.Join(args, " "), code, stderr.String(), exitFailed)
		}
	}
}
