package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestCreateFailureReported: whatever ends a run after its flags parse (exit 1, 4, 130), the
// --json receipt and the metrics file say so. Once, a set that could not be locked (another
// run, a symlinked lock, a bucket refusing the credentials) or that belonged to another
// source printed no receipt and wrote no metrics, so the metrics kept saying complete.
func TestCreateFailureReported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		code int
		// breakSet makes the next run into the set fail; it returns what ends the run
		// (nil: nothing), called once the run started.
		breakSet func(t *testing.T, set string) func(*exec.Cmd)
		args     []string
	}{
		{"locked", exitLocked, holdLock, nil},
		{"interrupted-waiting", exitInterrupted, func(t *testing.T, set string) func(*exec.Cmd) {
			holdLock(t, set)
			return func(cmd *exec.Cmd) {
				// Not a fixed delay from the start: under load the run may not yet have
				// its signal handler, and Go's default for SIGINT is exit 2.
				waitForOpen(t, cmd.Process.Pid, filepath.Join(set, ".backup.lock"))
				cmd.Process.Signal(os.Interrupt)
			}
		}, []string{"--wait", "1m"}},
		{"symlinked-lock", exitFailed, func(t *testing.T, set string) func(*exec.Cmd) {
			lock := filepath.Join(set, ".backup.lock")
			os.Remove(lock)
			if err := os.Symlink("/tmp/elsewhere", lock); err != nil {
				t.Fatal(err)
			}
			return nil
		}, nil},
		{"other-source", exitFailed, func(t *testing.T, set string) func(*exec.Cmd) {
			if err := os.WriteFile(filepath.Join(set, "LATEST"), []byte("other-20240101T000000Z.zip\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return nil
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
			set, prom := filepath.Join(dir, "set"), filepath.Join(dir, "backup.prom")
			args := []string{"create", "-q", "--json", "--output-dir", set, "--metrics-file", prom}
			mustExit(t, backup(t, runOpts{dir: dir}, append(args, "app")...), exitComplete)
			success := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+set+`"}`)

			stop := c.breakSet(t, set)
			cmd := exec.Command(binary, append(append(args, c.args...), "app")...)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if stop != nil {
				stop(cmd)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, stderr.String())
			}
			checkFailureReported(t, stdout.Bytes(), prom, set, c.code, success)
		})
	}
}

// TestCreateFailureReportedS3: a bucket that refuses the credentials fails the run (exit 1),
// and the --json receipt and the metrics file say so.
func TestCreateFailureReportedS3(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	prom := filepath.Join(dir, "backup.prom")
	args := []string{"create", "-q", "--json", "--output-dir", s.loc, "--metrics-file", prom, "app"}
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, args...), exitComplete)
	success := metricValue(t, prom, `backup_last_success_timestamp_seconds{set="`+s.loc+`"}`)

	wrong := append(append([]string{}, s.env...), "AWS_SECRET_ACCESS_KEY=not-the-secret")
	r := backup(t, runOpts{dir: dir, env: wrong}, args...)
	mustExit(t, r, exitFailed)
	checkFailureReported(t, []byte(r.stdout), prom, s.loc, exitFailed, success)
}

// checkFailureReported checks what a failed run printed with --json and wrote to the metrics
// file: a failed receipt with its error, status failed with the run's exit code, and the
// last success carried over.
func checkFailureReported(t *testing.T, stdout []byte, prom, set string, code int, success float64) {
	t.Helper()
	var rc format.Receipt
	if err := json.Unmarshal(stdout, &rc); err != nil {
		t.Errorf("--json printed %q: %v", stdout, err)
	} else if rc.Status != format.Failed || rc.Error == "" || rc.Archive != nil {
		t.Errorf("--json receipt: %s, error %q, archive %+v; want failed with its error, no archive", rc.Status, rc.Error, rc.Archive)
	}
	label := `{set="` + set + `"}`
	for series, want := range map[string]float64{
		`backup_last_status{set="` + set + `",status="failed"}`:   1,
		`backup_last_status{set="` + set + `",status="complete"}`: 0,
		"backup_last_exit_code" + label:                           float64(code),
		"backup_last_success_timestamp_seconds" + label:           success,
		"backup_archive_bytes" + label:                            0,
	} {
		if got := metricValue(t, prom, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// holdLock holds the set's lock, as a running backup does, until the test ends.
func holdLock(t *testing.T, set string) func(*exec.Cmd) {
	t.Helper()
	t.Cleanup(heldFlock(t, filepath.Join(set, ".backup.lock")))
	return nil
}

// waitForOpen waits until process pid holds path open: a run has installed its signal
// handler before it opens its set's lock.
func waitForOpen(t *testing.T, pid int, path string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	waitFor(t, "the run to open "+path, func() bool {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, _ := os.Readlink(filepath.Join(fds, e.Name())); target == path {
				return true
			}
		}
		return false
	})
}

// TestStatusFailureReported: status that cannot read its set (exit 1) still rewrites its
// metrics file: unhealthy, with the last success it knew. Once it wrote nothing, and the
// file kept saying healthy.
func TestStatusFailureReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	set, prom := filepath.Join(dir, "set"), filepath.Join(dir, "status.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "--metrics-file", prom, set), exitComplete)
	label := `{set="` + set + `"}`
	success := metricValue(t, prom, "backup_last_success_timestamp_seconds"+label)

	// A file where the set's folder was: it cannot be listed.
	if err := os.Rename(set, set+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(set, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "status", "--metrics-file", prom, set)
	mustExit(t, r, exitFailed)
	if !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("stderr %q, want the cause", r.stderr)
	}
	for series, want := range map[string]float64{
		"backup_set_healthy" + label:                    0,
		"backup_last_success_timestamp_seconds" + label: success,
	} {
		if got := metricValue(t, prom, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// TestCreatePruneFailsAfterSuccess: a complete run whose archive LATEST now names is a
// success for monitoring even when the prune after it fails (exit 1): the metrics file's last
// success is its finish. Once it kept the success of the run before, and an age alert fired
// while fresh backups were in the set.
func TestCreatePruneFailsAfterSuccess(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	set, prom := filepath.Join(dir, "set"), filepath.Join(dir, "backup.prom")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	oldest := filepath.Join(set, setArchives(t, set)[0])
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", oldest, "-e", "trace=unlinkat",
		"-e", "inject=unlinkat:error=EIO", binary, "create", "-q", "--json", "--output-dir", set,
		"--keep-last", "1", "--metrics-file", prom, "app")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "prune") {
		t.Fatalf("exit %d, want %d with the prune's error: %s", code, exitFailed, stderr.String())
	}
	var rc format.Receipt
	if err := json.Unmarshal(stdout.Bytes(), &rc); err != nil || rc.Status != format.Complete {
		t.Fatalf("--json printed %q (%v), want a complete receipt", stdout.String(), err)
	}
	label := `{set="` + set + `"}`
	if got, want := metricValue(t, prom, "backup_last_success_timestamp_seconds"+label), float64(rc.FinishedAt.Unix()); got != want {
		t.Errorf("last success %v, want the run's finish %v", got, want)
	}
	if got := metricValue(t, prom, "backup_last_exit_code"+label); got != exitFailed {
		t.Errorf("last exit code %v, want %d", got, exitFailed)
	}
}
