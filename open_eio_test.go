package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenEIOIsReported: an I/O error on any read that opening an archive makes (its end
// records, the zip64 locator looked for behind them, the central directory, read by Go's
// reader and walked again by backup's own, the manifest's local header and data
// descriptor) is reported as one, whatever it then does to the run: strace injects EIO on
// the Nth pread64 of the archive for verify, list and restore. Before, an EIO on the
// locator's or the descriptor's read was dropped (exit 0, no word of it), and one on the
// walk of the directory made every entry's local header "not found" (attack pass 22).
func TestOpenEIOIsReported(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, arch := attackSpanTree(t, dir, 300, 0)
	for _, cmdline := range [][]string{{"verify", arch}, {"list", arch}, {"restore", "--jobs", "1", arch, filepath.Join(dir, "r")}} {
		for n := 1; n <= 30; n++ {
			os.RemoveAll(filepath.Join(dir, "r"))
			failed, out, code := withEIO(t, dir, arch, n, cmdline...)
			if len(failed) == 0 {
				continue
			}
			injected := failed[len(failed)-1]
			if !strings.Contains(out, "input/output error") {
				t.Errorf("backup %s: EIO injected at pread64 #%d of the archive:\n%s\nexit %d, and no word of it:\n%s",
					cmdline[0], n, injected, code, lastLines(out, 4))
			}
		}
	}
}

// withEIO runs backup with args, under strace injecting EIO on the nth pread64 of arch, and
// returns the reads that failed (none when the run made fewer reads), what the run printed
// on stdout and stderr, and its exit code.
func withEIO(t *testing.T, dir, arch string, n int, args ...string) (injected []string, out string, code int) {
	t.Helper()
	log := filepath.Join(dir, fmt.Sprintf("strace-%s-%d.log", args[0], n))
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-o", log, "-P", arch, "-e", "trace=pread64",
		"-e", fmt.Sprintf("inject=pread64:error=EIO:when=%d", n), binary}, args...)...)
	// strace counts each thread's calls apart: with one thread running Go code, the nth read
	// of the run is the nth of the thread that makes it, whatever the machine's load.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	data, _ := os.ReadFile(log)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "(INJECTED)") {
			injected = append(injected, l)
		}
	}
	return injected, stdout.String() + stderr.String(), cmd.ProcessState.ExitCode()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
