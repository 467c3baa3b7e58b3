package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"backup/backupset/s3store/s3test"
)

// faultProxy stands between backup and the S3 server and breaks some requests: fault
// decides, for each request (numbered from 1 per kind), what goes wrong with it.
type faultProxy struct {
	mu    sync.Mutex
	count map[string]int
	fault func(r *http.Request, kind string, n int) fault
}

type fault int

const (
	pass         fault = iota
	status500          // answer 500 without passing the request on
	status503          // answer 503 (slow down)
	reset              // read some of the request, then drop the connection
	corruptGet         // pass it on, and flip a byte of the answer
	stall              // read the request, then answer nothing until the client hangs up
	stallBody          // pass it on, and stop the answer's body halfway until the client hangs up
	lostAnswer         // pass it on, let the server act on it, then drop the connection unanswered
	noSuchUpload       // answer 404 NoSuchUpload, as S3 may to a completion tried again
	status412          // answer 412 PreconditionFailed, as S3 may to a conditional write tried again
	holdAnswer         // pass it on, let the server act on it, then answer nothing until the client hangs up
	status409          // answer 409 ConditionalRequestConflict, as S3 does to conditional writes of one key racing
	status403          // answer 403 AccessDenied, as S3 does to what the credentials may not do
)

// stallingBody passes left bytes of body on, then blocks until done (the client hung up).
type stallingBody struct {
	body io.ReadCloser
	left int64
	done <-chan struct{}
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		<-b.done
		return 0, io.ErrUnexpectedEOF
	}
	n, err := b.body.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

func (b *stallingBody) Close() error { return b.body.Close() }

// requestKind names what an S3 request does, as far as the tests care.
func requestKind(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && q.Has("partNumber"):
		return "part"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "complete"
	case r.Method == http.MethodGet && r.Header.Get("Range") != "" && (strings.HasSuffix(r.URL.Path, ".zip") || strings.HasSuffix(r.URL.Path, ".zip.age")):
		return "ranged read"
	case r.Method == http.MethodGet && q.Get("list-type") == "2":
		return "list"
	case r.Method == http.MethodGet && q.Has("uploads"):
		return "list uploads"
	}
	return r.Method
}

// startFaultProxy starts the proxy in front of target and returns its URL, and the counts of
// the requests it saw by kind.
func startFaultProxy(t *testing.T, target string, decide func(kind string, n int) fault) (string, func(kind string) int) {
	t.Helper()
	return startRequestFaultProxy(t, target, func(_ *http.Request, kind string, n int) fault { return decide(kind, n) })
}

// startRequestFaultProxy is startFaultProxy for a fault that depends on more of the request
// than its kind (its key).
func startRequestFaultProxy(t *testing.T, target string, decide func(r *http.Request, kind string, n int) fault) (string, func(kind string) int) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{count: map[string]int{}, fault: decide}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1                    // a stalled body's first half reaches the client
	rp.ErrorLog = log.New(io.Discard, "", 0) // the faults it meets are the test's own
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("X-Test-Stall") != "" {
			resp.Body = &stallingBody{body: resp.Body, left: resp.ContentLength / 2, done: resp.Request.Context().Done()}
			return nil
		}
		if resp.Request.Header.Get("X-Test-Corrupt") == "" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		p.mu.Lock()
		p.count[kind]++
		n := p.count[kind]
		p.mu.Unlock()
		switch p.fault(r, kind, n) {
		case status500:
			http.Error(w, "<Error><Code>InternalError</Code></Error>", http.StatusInternalServerError)
		case status503:
			http.Error(w, "<Error><Code>SlowDown</Code></Error>", http.StatusServiceUnavailable)
		case reset:
			io.CopyN(io.Discard, r.Body, 4096)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case corruptGet:
			r.Header.Set("X-Test-Corrupt", "1") // seen by ModifyResponse; signed headers are unaffected
			rp.ServeHTTP(w, r)
		case stall:
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		case stallBody:
			r.Header.Set("X-Test-Stall", "1")
			rp.ServeHTTP(w, r)
		case noSuchUpload:
			http.Error(w, "<Error><Code>NoSuchUpload</Code></Error>", http.StatusNotFound)
		case status412:
			http.Error(w, "<Error><Code>PreconditionFailed</Code></Error>", http.StatusPreconditionFailed)
		case status403:
			http.Error(w, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>", http.StatusForbidden)
		case status409:
			http.Error(w, "<Error><Code>ConditionalRequestConflict</Code></Error>", http.StatusConflict)
		case lostAnswer:
			rp.ServeHTTP(httptest.NewRecorder(), r)
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		case holdAnswer:
			rp.ServeHTTP(httptest.NewRecorder(), r)
			<-r.Context().Done()
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(kind string) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.count[kind]
	}
}

// TestS3SetServerFaults runs create through a proxy that fails requests: a few 500s, 503s
// and reset connections are retried and the backup completes; a server that keeps failing
// the upload fails the run (exit 1) with nothing published: no archive, LATEST unchanged,
// no upload left; an archive whose read-back differs from what was written is never
// activated.
func TestS3SetServerFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fault    func(kind string, n int) fault
		wantCode int
	}{
		{"transient", func(kind string, n int) fault {
			switch {
			case kind == "part" && n == 1:
				return status500
			case kind == "part" && n == 2:
				return reset
			case kind == "complete" && n == 1:
				return status503
			}
			return pass
		}, exitComplete},
		{"upload keeps failing", func(kind string, n int) fault {
			if kind == "part" {
				return []fault{status500, status503, reset}[n%3]
			}
			return pass
		}, exitFailed},
		{"read-back differs", func(kind string, n int) fault {
			if kind == "ranged read" {
				return corruptGet
			}
			return pass
		}, exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newS3Set(t)
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "first\n"}})
			mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
			good := readLatest(t, s.dir)

			proxy, seen := startFaultProxy(t, s.srv.Endpoint, tt.fault)
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"random": {content: randomString(t, 20<<20)}})
			r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--s3-endpoint", proxy, "app")
			mustExit(t, r, tt.wantCode)
			if strings.Contains(r.stderr, s3test.SecretKey) {
				t.Errorf("the secret key was printed: %s", r.stderr)
			}
			archives := setArchives(t, s.dir)
			switch tt.name {
			case "transient":
				if len(archives) != 4 || readLatest(t, s.dir) != archives[2] {
					t.Errorf("bucket holds %v, LATEST %q; want the new archive activated", archives, readLatest(t, s.dir))
				}
			case "upload keeps failing":
				if len(archives) != 3 || !strings.HasSuffix(archives[2], ".receipt.json") || readLatest(t, s.dir) != good {
					t.Errorf("bucket holds %v, LATEST %q; want no new archive, a failed run's receipt, LATEST on %s", archives, readLatest(t, s.dir), good)
				}
				if n := seen("part"); n < 5 {
					t.Errorf("the server saw %d part uploads, want each part tried 5 times", n)
				}
			case "read-back differs":
				rc := readReceipt(t, filepath.Join(s.dir, archives[len(archives)-1]))
				if readLatest(t, s.dir) != good || rc.Status != "failed" || !strings.Contains(rc.Error, "failed verification") {
					t.Errorf("LATEST %q, new receipt %s %q; want LATEST on %s and the run marked failed", readLatest(t, s.dir), rc.Status, rc.Error, good)
				}
			}
			if n := uploadsInProgress(t, s); n != 0 {
				t.Errorf("%d uploads left, want none", n)
			}
			if _, err := os.Stat(filepath.Join(s.dir, ".backup.lock")); err == nil {
				t.Error("the lock object was left behind")
			}
		})
	}
}

// rangeIgnoringProxy plays a server that ignores Range: every ranged read of an archive is
// answered 200 with the whole object, read from the test server's folder (root).
func rangeIgnoringProxy(t *testing.T, target, root string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requestKind(r) != "ranged read" {
			rp.ServeHTTP(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(r.URL.Path)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestS3SetServerIgnoresRange: verify through a server that answers a ranged read with the
// whole object fails (exit 1) saying so, instead of reading the object's first bytes as the
// range asked for and reporting the archive damaged; the archive itself is whole.
func TestS3SetServerIgnoresRange(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r": {content: randomString(t, 3<<20)}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	proxy := rangeIgnoringProxy(t, s.srv.Endpoint, s.srv.Root)
	r := backup(t, runOpts{dir: dir, env: s.env}, "verify", "--s3-endpoint", proxy, s.loc)
	if r.code != exitFailed || !strings.Contains(r.stderr, "does it ignore Range?") || strings.Contains(r.stderr, "FAILED") {
		t.Errorf("verify through a server that ignores Range: exit %d, stderr %q; want %d naming the server's answer", r.code, r.stderr, exitFailed)
	}
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "verify", s.loc), exitComplete)
}
