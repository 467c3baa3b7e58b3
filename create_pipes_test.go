package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// manyNames is a tree whose -v listing (or --json-lines events, as symlinks) is well past a
// pipe's 64 KiB buffer: a run printing it must write after its reader has gone.
func manyNames(t *testing.T, root string, symlinks bool) {
	t.Helper()
	nodes := map[string]node{}
	for i := range 1500 {
		name := fmt.Sprintf("d%02d/%s-%04d", i%10, strings.Repeat("n", 60), i)
		if symlinks {
			nodes[name] = node{kind: "symlink", content: "target"}
		} else {
			nodes[name] = node{content: "x"}
		}
	}
	makeTree(t, root, nodes)
}

// headOne runs the binary as `backup ARGS 2>&1 | head -1` does (stream "stderr": stdout and
// stderr into the pipe) or as `backup ARGS | head -1` (stream "stdout"): a real pipe whose
// reader takes one line and closes it. It returns the exit code, 128+N when signal N killed
// the process, and what went to stderr when stderr was not the pipe.
func headOne(t *testing.T, opts runOpts, stream string, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = opts.dir
	cmd.Env = append(os.Environ(), opts.env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if stream == "stderr" {
		cmd.Stderr = w
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Errorf("reading the first line: %q, %v", line, err)
	}
	r.Close()
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		return 128 + int(ws.Signal()), stderr.String()
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// noTemps fails t when dir holds a temp file a run left (.NAME.tmp-*).
func noTemps(t *testing.T, dir string) {
	t.Helper()
	for _, name := range listDir(t, dir) {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("%s left in %s", name, dir)
		}
	}
}

// TestCreateClosedStderr: `backup create -v ... 2>&1 | head -1`. Once, SIGPIPE killed the
// run at its next line: exit 141, a temp archive left, no receipt, and in a bucket a lock
// that made every run exit 4 for five minutes. The run now stops printing, finishes, writes
// its receipt and exits as its status says.
func TestCreateClosedStderr(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		manyNames(t, filepath.Join(dir, "app"), false)
		if code, _ := headOne(t, runOpts{dir: dir}, "stderr", "create", "-v", "-o", "x.zip", "app"); code != exitComplete {
			t.Errorf("exit %d, want 0", code)
		}
		if rc := readReceipt(t, filepath.Join(dir, "x.zip.receipt.json")); rc.Status != "complete" || rc.Counts.Files != 1500 {
			t.Errorf("receipt %s, %d files; want complete, 1500", rc.Status, rc.Counts.Files)
		}
		readZip(t, filepath.Join(dir, "x.zip"))
		noTemps(t, dir)
	})
	t.Run("set", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		manyNames(t, filepath.Join(dir, "app"), false)
		if code, _ := headOne(t, runOpts{dir: dir}, "stderr", "create", "-v", "--output-dir", "set", "app"); code != exitComplete {
			t.Errorf("exit %d, want 0", code)
		}
		latest := readLatest(t, filepath.Join(dir, "set"))
		if rc := readReceipt(t, filepath.Join(dir, "set", latest+".receipt.json")); rc.Status != "complete" {
			t.Errorf("LATEST %s: receipt %s, want complete", latest, rc.Status)
		}
		noTemps(t, filepath.Join(dir, "set"))
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		s := newS3Set(t)
		dir := t.TempDir()
		manyNames(t, filepath.Join(dir, "app"), false)
		opts := runOpts{dir: dir, env: s.env}
		if code, _ := headOne(t, opts, "stderr", "create", "-v", "--output-dir", s.loc, "app"); code != exitComplete {
			t.Errorf("exit %d, want 0", code)
		}
		if latest := readLatest(t, s.dir); latest == "" {
			t.Error("LATEST not moved")
		}
		// The lock was released: the next run does not wait out its lease.
		mustExit(t, backup(t, opts, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	})
}

// TestCreateClosedStdout: `backup create --json-lines ... | head -1`, and --json into a pipe
// already closed. Once, SIGPIPE killed the --json-lines run at its second event, leaving a
// temp archive and no receipt. The run now finishes, writes its receipt, exits as its
// status says, and says on stderr that stdout was cut.
func TestCreateClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manyNames(t, filepath.Join(dir, "app"), true)
	code, stderr := headOne(t, runOpts{dir: dir}, "stdout", "create", "--json-lines", "-o", "x.zip", "app")
	if code != exitComplete || !strings.Contains(stderr, "backup: writing --json-lines to stdout: ") {
		t.Errorf("exit %d, stderr %q; want 0 and a line saying stdout was cut", code, stderr)
	}
	if rc := readReceipt(t, filepath.Join(dir, "x.zip.receipt.json")); rc.Status != "complete" || rc.Counts.Skipped != 1500 {
		t.Errorf("receipt %s, %d skipped; want complete, 1500", rc.Status, rc.Counts.Skipped)
	}
	noTemps(t, dir)

	// --json: the reader is gone before the receipt is printed.
	cmd := exec.Command(binary, "create", "--json", "-o", "y.zip", "app")
	cmd.Dir = dir
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	var errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errBuf
	cmd.Run()
	w.Close()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete || !strings.Contains(errBuf.String(), "backup: writing --json to stdout: ") {
		t.Errorf("--json: exit %d, stderr %q; want 0 and a line saying stdout was cut", code, errBuf.String())
	}
	if rc := readReceipt(t, filepath.Join(dir, "y.zip.receipt.json")); rc.Status != "complete" {
		t.Errorf("--json: receipt %s, want complete", rc.Status)
	}
}

// TestSetCommandsClosedStdout: prune, activate and adopt whose stdout reader is gone (a pipe
// closed before they print, as `| head -1` leaves it) are not killed by SIGPIPE: each
// finishes as it would (exit 0), and prune still runs its --exec-after hook, which
// docs/operations.md (Hooks) promises after every outcome.
func TestSetCommandsClosedStdout(t *testing.T) {
	t.Parallel()
	dir, set, a, elsewhere := adoptSet(t)
	ran := filepath.Join(dir, "after-ran")
	for _, args := range [][]string{
		{"activate", set, a},
		{"adopt", set, elsewhere},
		{"prune", "--keep-last", "1", "--exec-after", "touch " + ran, set},
	} {
		cmd := exec.Command(binary, args...)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var errBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &errBuf
		cmd.Run()
		w.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitComplete {
			t.Errorf("%s: exit %d, stderr %q; want 0", args[0], code, errBuf.String())
		}
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("prune's --exec-after did not run: %v", err)
	}
}
