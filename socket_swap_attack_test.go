package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"backup/format"
)

// TestAttackFileSwappedForSocketSaysLost: a regular file the walk listed and then found
// replaced by a unix socket when it opened it (a service that makes its control socket
// where a file was) was lost, "open: no such device or address", exit 3: open refuses a
// socket (ENXIO) before fstat can say what it is. docs/create.md says a regular file swapped
// for a socket, FIFO or device after the walk's lstat is skipped once it is seen for what it
// is, as a FIFO swapped in is.
// Correct: skipped, kind socket; the run is complete.
func TestAttackFileSwappedForSocketSaysLost(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"ctl": {content: "a file for now\n"}})
	// Bound beside the tree first, so that the swap is one rename.
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := filepath.Join(dir, "out.zip")

	// Held as it opens the file, after the walk listed it as a regular file.
	cmd, stderr := startIn(t, dir, "strace", "-f", "-qq", "-o", os.DevNull, "-P", src, "-e", "trace=openat",
		"-e", "inject=openat:delay_enter=3000000:when=1", binary, "create", "-o", out, "app")
	waitFor(t, "the run held at the file's open", inSyscall(cmd, unix.SYS_OPENAT))
	if err := os.Rename(filepath.Join(dir, "sock"), filepath.Join(src, "ctl")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if code := cmd.ProcessState.ExitCode(); code != exitComplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitComplete, stderr)
	}
	rc := readReceipt(t, out+".receipt.json")
	if rc.Status != format.Complete || len(rc.Warnings) != 0 {
		t.Errorf("status %s, warnings %+v; want complete, none", rc.Status, rc.Warnings)
	}
	if len(rc.Skipped) != 1 || rc.Skipped[0].Path != "app/ctl" || rc.Skipped[0].Kind != "socket" {
		t.Errorf("skipped %+v, want app/ctl as a socket", rc.Skipped)
	}
	unzipTest(t, out)
}
