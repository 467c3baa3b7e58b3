package main

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// interruptAtRequest runs backup with args and --s3-endpoint through a proxy in front of s's
// server, in dir with s's environment; the proxy holds the first request that held reports,
// and once it is held the run gets SIGTERM. It returns the exit code, stdout and stderr.
func interruptAtRequest(t *testing.T, s s3Set, dir string, held func(r *http.Request, kind string) bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var holding atomic.Bool
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, _ int) fault {
		if held(r, kind) && !holding.Swap(true) {
			return stall
		}
		return pass
	})
	cmd := exec.Command(binary, append(args, "--s3-endpoint", proxy)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the held request of "+args[0], holding.Load)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String(), errs.String()
}

// requestOfKind is a held for interruptAtRequest: the first request of kind (see
// requestKind).
func requestOfKind(kind string) func(*http.Request, string) bool {
	return func(_ *http.Request, k string) bool { return k == kind }
}
