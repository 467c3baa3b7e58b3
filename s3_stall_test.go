package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"backup/backupset/s3store/s3test"
	"backup/format"
)

// startHeldUpload starts a create into the set, waits until its upload has begun, and stops
// the server (SIGSTOP): the run now talks to a server that accepts connections and never
// answers. The source is 20 MiB of random bytes (stored at once: the first 16 MiB part goes
// out within moments, even under -race) and then 8 MiB of hex, slow to compress at level 9 on
// one job (the upload stays open long enough to be seen). The server is resumed when the
// test ends.
func startHeldUpload(t *testing.T, s s3Set, extra ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.bin": {content: randomString(t, 20<<20)}, "b.txt": {content: slowString(t, 8<<20)}})
	cmd := exec.Command(binary, append([]string{"create", "--level", "9", "-j", "1", "--output-dir", s.loc}, append(extra, "app")...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitFor(t, "the upload to start", func() bool { return uploadsInProgress(t, s) > 0 })
	if err := s.srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.srv.Process.Signal(syscall.SIGCONT) })
	return cmd, &stderr
}

// waitExit waits for cmd up to limit, and fails the test (killing cmd) when it hangs.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration, stderr *strings.Builder) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the run still hung %v after the server stopped; stderr:\n%s", limit, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), time.Since(start)
}

// TestS3SetStalledServerFailsTheRun stops the server (SIGSTOP) while a run uploads: every
// request has a deadline on progress (here shortened with the hidden test hook
// --s3-idle-timeout, 60 s by default), is retried with backoff (AWS_MAX_ATTEMPTS=2 here), and
// then the run fails (exit 1) saying the server stalled, instead of hanging for ever; LATEST
// is untouched.
func TestS3SetStalledServerFailsTheRun(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	s.env = append(s.env, "AWS_MAX_ATTEMPTS=2")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	good := readLatest(t, s.dir)

	cmd, stderr := startHeldUpload(t, s, "--s3-idle-timeout", "3s")
	code, _ := waitExit(t, cmd, 90*time.Second, stderr)
	if code != exitFailed || !strings.Contains(stderr.String(), "the server sent or took nothing for 3s (after 2 attempts)") {
		t.Errorf("exit %d, stderr:\n%s\nwant %d and the stall named", code, stderr.String(), exitFailed)
	}
	if strings.Contains(stderr.String(), s3test.SecretKey) {
		t.Errorf("the secret key was printed: %s", stderr.String())
	}
	s.srv.Process.Signal(syscall.SIGCONT)
	if got := readLatest(t, s.dir); got != good {
		t.Errorf("LATEST names %q after the stall, want %q", got, good)
	}
}

// TestS3SetInterruptWhileServerStalls sends SIGINT or SIGTERM to a run whose server stopped
// mid-upload, with the default 60 s deadline: the signal cancels the requests in flight, and
// the cleanup (abort the upload, write the failed receipt, release the lock) gets 10 s in all,
// so the run exits 130 within seconds. When the server comes back during that cleanup, the
// cleanup is done: the upload aborted (see checkAborted), the lock released, a failed
// receipt in the set, LATEST untouched. (A first run makes the set: versitygw lists no
// upload under a prefix that has no object yet.) Before, the run hung for ever in the abort
// of its upload.
func TestS3SetInterruptWhileServerStalls(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		sig     syscall.Signal
		resumed bool
	}{
		{"SIGINT server stays stopped", syscall.SIGINT, false},
		{"SIGTERM server back during the cleanup", syscall.SIGTERM, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
			good := readLatest(t, s.dir)
			cmd, stderr := startHeldUpload(t, s)
			time.Sleep(500 * time.Millisecond) // let a request reach the stopped server
			cmd.Process.Signal(tt.sig)
			if tt.resumed {
				time.Sleep(2 * time.Second)
				s.srv.Process.Signal(syscall.SIGCONT)
			}
			code, took := waitExit(t, cmd, 45*time.Second, stderr)
			if code != exitInterrupted || took > 25*time.Second {
				t.Errorf("exit %d after %v, stderr:\n%s\nwant %d within the cleanup's 10 s", code, took, stderr.String(), exitInterrupted)
			}
			if !tt.resumed {
				// What could not be done is said in words, not as the SDK's empty fields.
				if !strings.Contains(stderr.String(), "no answer in time") || strings.Contains(stderr.String(), "StatusCode: 0") {
					t.Errorf("stderr:\n%s\nwant the cleanup's requests said to have had no answer in time", stderr.String())
				}
				return
			}
			checkAborted(t, s)
			if _, err := os.Stat(filepath.Join(s.dir, ".backup.lock")); err == nil {
				t.Error("the lock object was left behind")
			}
			archives := setArchives(t, s.dir)
			if len(archives) != 3 || !strings.HasSuffix(archives[2], ".receipt.json") || readLatest(t, s.dir) != good {
				t.Fatalf("the set holds %v, LATEST %q; want the first run's pair, the failed run's receipt, LATEST on %s", archives, readLatest(t, s.dir), good)
			}
			if rc := readReceipt(t, filepath.Join(s.dir, archives[2])); rc.Status != "failed" || rc.Error != "interrupted" {
				t.Errorf("receipt: %s %q, want failed, interrupted", rc.Status, rc.Error)
			}
		})
	}
}

// checkAborted fails the test unless the run aborted its upload, and no upload is left but
// one whose part was stored after the abort: a part in flight when the abort came "might or
// might not succeed", and then the upload is there again for the next run's Clean (AWS's
// AbortMultipartUpload; versitygw makes the upload's folder again to store the part). Here
// the part's body was in the stopped server's socket when the run gave up on it (the full
// suite met it once).
func checkAborted(t *testing.T, s s3Set) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // the server logs a request once it has answered it
	log, err := s3test.ReadAccessLog(s.srv.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	aborted, storedAfter := map[string]bool{}, map[string]bool{} // by upload id, in log order
	for _, a := range log {
		id := a.Query.Get("uploadId")
		switch {
		case a.Op == "AbortMultipartUpload" && a.Status/100 == 2:
			aborted[id] = true
		case a.Op == "UploadPart" && a.Status/100 == 2 && aborted[id]:
			storedAfter[id] = true
		}
	}
	if len(aborted) == 0 {
		t.Fatal("the access log shows no abort of the interrupted run's upload")
	}
	for _, id := range uploadIDs(t, s) {
		if !storedAfter[id] {
			t.Errorf("upload %s left, want the interrupted one aborted", id)
		}
	}
}

// TestS3SetStalledRequestsRetried sends create and verify through a proxy that leaves the
// first request of each kind unanswered, or stops its answer's body halfway: each is given
// up at the deadline (the hidden --s3-idle-timeout, 3 s here), tried again, and the run
// completes. The body of a GET, which the SDK does not retry, is fetched again too.
func TestS3SetStalledRequestsRetried(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	proxy, seen := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		switch {
		case n == 1 && (kind == "part" || kind == "complete" || kind == "PUT"):
			return stall
		case n == 1 && (kind == "ranged read" || kind == "GET"):
			return stallBody
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: randomString(t, 20<<20)}})
	run := func(args ...string) result {
		return backup(t, runOpts{dir: dir, env: s.env}, append(args, "--s3-endpoint", proxy, "--s3-idle-timeout", "3s")...)
	}
	r := run("create", "--output-dir", s.loc, "app")
	mustExit(t, r, exitComplete)
	archives := setArchives(t, s.dir)
	if len(archives) != 4 || readLatest(t, s.dir) != archives[2] {
		t.Errorf("bucket holds %v, LATEST %q; want the new archive activated", archives, readLatest(t, s.dir))
	}
	for _, kind := range []string{"part", "complete", "PUT", "ranged read", "GET"} {
		if seen(kind) < 2 {
			t.Errorf("the server saw %d %s requests, want the stalled one tried again", seen(kind), kind)
		}
	}
	mustExit(t, run("verify", s.loc), exitComplete)
}

// TestS3SetLostAnswers: the server acts on a request (creates the lock, the receipt or
// LATEST, completes the upload) but its answer is lost (the connection drops), so the client
// tries again and is told the name is taken, the ETag changed or the upload is gone. The run
// recognises its own write (the same bytes; the upload's token in the object's metadata)
// and completes. Before, a lost answer to the lock's creation made the run report itself as
// "another backup of this set is running" and leave its lock; a lost answer to the
// receipt's failed the run with its archive in place.
func TestS3SetLostAnswers(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	type loss struct {
		kind  string
		n     int
		retry fault // the answer to the retry; pass: the server's own
	}
	losses := []loss{{"PUT", 1, pass}, {"PUT", 2, pass}, {"PUT", 3, pass}, {"PUT", 4, pass},
		{"complete", 1, pass}, {"complete", 1, noSuchUpload}, {"complete", 1, status412}}
	for _, l := range losses {
		proxy, seen := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
			switch {
			case kind == l.kind && n == l.n:
				return lostAnswer
			case kind == l.kind && n == l.n+1:
				return l.retry
			}
			return pass
		})
		makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: randomString(t, 1<<20)}})
		r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
		if seen(l.kind) <= l.n {
			continue // the run made fewer such requests
		}
		if r.code != exitComplete {
			t.Errorf("answer to %s #%d lost, the retry answered %d: exit %d; stderr:\n%s", l.kind, l.n, l.retry, r.code, r.stderr)
		}
		archives := setArchives(t, s.dir)
		if last := archives[len(archives)-2]; readLatest(t, s.dir) != last || !strings.HasSuffix(archives[len(archives)-1], ".receipt.json") {
			t.Errorf("answer to %s #%d lost: the set holds %v, LATEST %q; want the new archive, its receipt, LATEST on it", l.kind, l.n, archives, readLatest(t, s.dir))
		}
		if err := os.Remove(filepath.Join(s.dir, ".backup.lock")); err == nil {
			t.Errorf("answer to %s #%d lost: the lock object was left behind", l.kind, l.n)
		}
	}
}

// TestS3SetInterruptedAfterLatestWritten: the server moves LATEST but its answer does not
// come back before SIGINT cancels the request. The run must not say "LATEST not moved"
// (exit 130) while the bucket's LATEST names the new archive: it asks the bucket, and says
// what it holds.
func TestS3SetInterruptedAfterLatestWritten(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	prom := filepath.Join(dir, "backup.prom")
	cmd, stderr := interruptedAtLatestWrite(t, s, dir, pass, "--metrics-file", prom)
	code := cmd.ProcessState.ExitCode()
	latest := readLatest(t, s.dir)
	if strings.Contains(stderr.String(), "not moved") || code != exitComplete || !strings.Contains(stderr.String(), "LATEST -> "+latest) {
		t.Errorf("LATEST moved to %s, but the run exited %d saying:\n%s", latest, code, stderr.String())
	}
	if got := exitMetric(t, prom); got != float64(code) {
		t.Errorf("metrics say exit %v, the run %d", got, code)
	}
}

// TestS3SetInterruptedWhilePublishing: SIGINT comes while the receipt's creation, or then the
// upload's completion, is under way: made by the server but not yet answered, or not even
// received. An archive the server completed is at its name with its receipt, and the run
// stops before LATEST moves, as a folder set's run interrupted after its renames does; that
// receipt says failed, since the archive was never read back; an archive not completed is
// not there, and its receipt says the run failed. Never an archive alone (a run that status
// calls unknown, and prune keeps for ever).
func TestS3SetInterruptedWhilePublishing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		kind      string // of the request held, the first of its kind to the new run's name
		fault     fault
		published bool // the archive is at its name once the server made what it was held at
	}{
		{"receipt made", "receipt", holdAnswer, false},
		{"receipt not received", "receipt", stall, false},
		{"completion made", "complete", holdAnswer, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
			old := readLatest(t, s.dir)
			var held atomic.Int32
			proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
				if kind == "PUT" && strings.HasSuffix(r.URL.Path, ".receipt.json") && !strings.HasSuffix(r.URL.Path, old+".receipt.json") {
					kind = "receipt"
				}
				if kind == tt.kind && held.Add(1) == 1 {
					return tt.fault
				}
				return pass
			})
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "second\n"}})
			cmd := exec.Command(binary, "create", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			waitFor(t, "the "+tt.kind+" held", func() bool {
				if held.Load() == 0 {
					return false
				}
				switch tt.name {
				case "receipt made":
					return len(setArchives(t, s.dir)) == 3
				case "completion made":
					return len(setArchives(t, s.dir)) == 4
				}
				return true
			})
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
			}
			archives := setArchives(t, s.dir)
			want := 3
			if tt.published {
				want = 4
			}
			if len(archives) != want || readLatest(t, s.dir) != old {
				t.Fatalf("the bucket holds %v, LATEST %q; want %d files, LATEST on %s; stderr:\n%s", archives, readLatest(t, s.dir), want, old, stderr.String())
			}
			receipt := archives[len(archives)-1]
			rc := readReceipt(t, filepath.Join(s.dir, receipt))
			if rc.Status != format.Failed || (rc.Archive != nil) != tt.published {
				t.Errorf("%s says %s, archive %v; want failed", receipt, rc.Status, rc.Archive)
			}
			if tt.published && !strings.Contains(rc.Error, "not verified") {
				t.Errorf("%s says %q; want that its archive was not read back", receipt, rc.Error)
			}
			if tt.published && !strings.Contains(stderr.String(), "LATEST not moved") {
				t.Errorf("stderr does not say LATEST was not moved:\n%s", stderr.String())
			}
			if r := backup(t, runOpts{env: s.env}, "status", s.loc); r.code != exitComplete || strings.Contains(r.stdout, "unknown") || strings.Contains(r.stdout, "gone") {
				t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestS3SetKilledWhilePublishing kills create (SIGKILL) once the server has completed the
// archive's upload, before the run heard so. What is left must be cleared by the set's own
// runs: after the next run and its prune, every archive has its receipt and status shows no
// run it cannot account for (an archive alone would be "unknown, kept" for ever).
func TestS3SetKilledWhilePublishing(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	proxy, _ := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		if kind == "complete" {
			return holdAnswer
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "second\n"}})
	cmd := exec.Command(binary, "create", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	first := setArchives(t, s.dir)
	waitFor(t, "the server to complete the upload", func() bool {
		for _, f := range setArchives(t, s.dir) {
			// The second run's name is app-TIME-2.zip only when it starts in the first's second.
			if strings.HasSuffix(f, ".zip") && !slices.Contains(first, f) {
				return true
			}
		}
		return false
	})
	cmd.Process.Kill()
	cmd.Wait()

	makeTree(t, filepath.Join(dir, "app"), map[string]node{"c": {content: "third\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--keep-last", "1", "app"), exitComplete)
	r := backup(t, runOpts{env: s.env}, "status", s.loc)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stdout, "unknown") || strings.Contains(r.stdout, "gone") {
		t.Errorf("after the next run and its prune, status shows a run it cannot account for:\n%s", r.stdout)
	}
	if files := setArchives(t, s.dir); len(files) != 2 {
		t.Errorf("the bucket holds %v, want the last run's archive and receipt", files)
	}
}

// interruptedAtLatestWrite makes a first backup in the bucket set s, then runs a second
// (with flags) whose write of LATEST the server makes but whose answer it holds, with
// after answering each look at LATEST that follows; it interrupts the run (SIGINT) once
// LATEST moved, and returns it ended.
func interruptedAtLatestWrite(t *testing.T, s s3Set, dir string, after fault, flags ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	old := readLatest(t, s.dir)
	var written atomic.Bool
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		switch {
		case !strings.HasSuffix(r.URL.Path, "/LATEST"):
			return pass
		case kind == "PUT":
			written.Store(true)
			return holdAnswer
		case written.Load():
			return after
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"b": {content: "second\n"}})
	args := append(append([]string{"create", "--output-dir", s.loc, "--s3-endpoint", proxy}, flags...), "app")
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the server to move LATEST", func() bool {
		data, err := os.ReadFile(filepath.Join(s.dir, "LATEST"))
		return err == nil && strings.TrimSpace(string(data)) != old
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return cmd, stderr
}
