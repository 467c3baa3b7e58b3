package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestAttackListInterrupted: SIGTERM while backup list read a bucket set's archive ended it
// with exit 1 and Go's words ("…: interrupted: context canceled"), as if the archive could
// not be read, which is what exit 1 means for list; operations.md says a first SIGINT or
// SIGTERM stops a command cleanly with exit 130. Correct: exit 130, "backup list:
// interrupted", as verify and sets say it.
func TestAttackListInterrupted(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)

	for _, args := range [][]string{{"list"}, {"list", "--json"}} {
		var stalled atomic.Bool
		proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(_ *http.Request, kind string, _ int) fault {
			if kind == "ranged read" && !stalled.Swap(true) {
				return stall
			}
			return pass
		})
		cmd := exec.Command(binary, append(args, "--s3-endpoint", proxy, s.loc)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		waitFor(t, "list reading the bucket", stalled.Load)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || stderr.String() != "backup list: interrupted\n" {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, code, stderr.String(), exitInterrupted, "backup list: interrupted\n")
		}
	}
}
