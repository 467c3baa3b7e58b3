package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tricklingBody passes body on a byte at a time, every every: always within the idle
// deadline, never done; until done (the client hung up).
type tricklingBody struct {
	body  io.ReadCloser
	every time.Duration
	done  <-chan struct{}
}

func (b tricklingBody) Read(p []byte) (int, error) {
	select {
	case <-b.done:
		return 0, io.ErrUnexpectedEOF
	case <-time.After(b.every):
	}
	return b.body.Read(p[:min(len(p), 1)])
}

func (b tricklingBody) Close() error { return b.body.Close() }

// startTricklingProxy starts a proxy in front of target that passes every request on, and
// trickles the answer of each GET whose key ends in suffix a byte every every, after the
// edits given.
func startTricklingProxy(t *testing.T, target, suffix string, every time.Duration, edits ...func(*http.Response)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1                    // each byte reaches the client as it is sent
	rp.ErrorLog = log.New(io.Discard, "", 0) // the hung-up trickles are the test's own
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && strings.HasSuffix(resp.Request.URL.Path, suffix) {
			for _, edit := range edits {
				edit(resp)
			}
			resp.Body = tricklingBody{body: resp.Body, every: every, done: resp.Request.Context().Done()}
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAttackS3TricklingServerHoldsTheRun: a server that sends a receipt a byte a second,
// always within the idle deadline (3 s here, 60 s by default), held a reader for as long as
// the receipt has bytes (with the default, a byte every 59 s holds a 1 MiB block for two
// years, and a create's lock is renewed all along). Every request needs a deadline: status
// must fail within seconds, not wait for the last byte. (The trickle keeps well within the
// idle deadline, so that a loaded machine's late byte is not taken for a stall.)
func TestAttackS3TricklingServerHoldsTheRun(t *testing.T) {
	t.Parallel()
	code, took, stderr := statusThroughTrickle(t)
	if code != exitFailed || !strings.Contains(stderr, "the server did not get through the request in") {
		t.Errorf("exit %d after %v, want %d and the slow server named; stderr:\n%s", code, took, exitFailed, stderr)
	}
}

// statusThroughTrickle runs status of a bucket set of one backup through a proxy that
// trickles its receipt a byte a second, its answer changed by edits, with an idle timeout
// of 3 s and two attempts per request (each bound to 7 s as a whole); it gives up on status
// after a minute.
func statusThroughTrickle(t *testing.T, edits ...func(*http.Response)) (code int, took time.Duration, stderr string) {
	t.Helper()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	proxy := startTricklingProxy(t, s.srv.Endpoint, ".receipt.json", time.Second, edits...)
	cmd := exec.Command(binary, "status", "--s3-endpoint", proxy, "--s3-idle-timeout", "3s", s.loc)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=2")...)
	var out strings.Builder
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, took = waitExit(t, cmd, time.Minute, &out)
	return code, took, out.String()
}

// paddedBody is body followed by spaces without end.
type paddedBody struct{ body io.ReadCloser }

func (b paddedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		p[0] = ' '
		return 1, nil
	}
	return n, err
}

func (b paddedBody) Close() error { return b.body.Close() }

// TestAttackS3TricklingServerAnnouncesALargeAnswer: the same trickle, of a receipt the
// server says is 1 GiB (its bytes, then spaces: JSON still), held status for ever: the
// deadline as a whole allowed a second per KiB the answer announced, 12 days for a receipt,
// which may be that large; only the bytes that came earn time.
func TestAttackS3TricklingServerAnnouncesALargeAnswer(t *testing.T) {
	t.Parallel()
	code, took, stderr := statusThroughTrickle(t, func(resp *http.Response) {
		resp.ContentLength = 1 << 30
		resp.Header.Set("Content-Length", "1073741824")
		resp.Body = paddedBody{resp.Body}
	})
	if code != exitFailed {
		t.Errorf("exit %d after %v, want %d; stderr:\n%s", code, took, exitFailed, stderr)
	}
}
