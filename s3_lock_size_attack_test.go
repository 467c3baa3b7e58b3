package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset"
	"backup/backupset/s3store"
)

// TestAttackS3LargeLockObject: docs/s3.md: "a lock object that does not read as a lease
// stands as long [5 minutes], then is taken over". One larger than the 4 KiB a lease is read
// up to (junk another host's tool wrote at the name, a lease padded by a broken writer) was
// never judged at all: the read of it failed, and every run failed with exit 1
// ("larger than 4096 bytes") for as long as the object stayed, an hour old or a second.
func TestAttackS3LargeLockObject(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	junk := `{"host":"web2.example","pid":4242,"note":"` + strings.Repeat("x", 8192) + `"}`
	if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName),
		Body: strings.NewReader(junk)}); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitLocked {
		t.Errorf("a lock object written a moment ago, too large to read as a lease: create exits %d (want 4, locked):\n%s", r.code, r.stderr)
	}

	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.dir, backupset.LockName), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitComplete {
		t.Errorf("a lock object unrenewed for an hour, too large to read as a lease: create exits %d (want 0, the lock taken over):\n%s", r.code, r.stderr)
	}
}

// TestAttackS3LeaseWithoutExpiryNoDate: docs/s3.md: from a server whose answers carry no
// Date, "the lease's own expires is taken, and a lock object that does not read as one
// stands until it is deleted". A lock object that is JSON but names no expiry (null, {},
// a lease of another tool's making) was read as a lease that expired in year 1, and taken
// over at once, beside a holder that may be alive.
func TestAttackS3LeaseWithoutExpiryNoDate(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	u, _ := url.Parse(s.srv.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Header.Del("Date")
		return nil
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil // no Date of the proxy's own either
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	for _, lock := range []string{`null`, `{}`, `{"host":"web2.example","pid":4242}`} {
		if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName),
			Body: strings.NewReader(lock)}); err != nil {
			t.Fatal(err)
		}
		r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--s3-endpoint", proxy.URL, "--output-dir", s.loc, "app")
		if r.code != exitLocked {
			t.Errorf("lock object %s, written a moment ago, read from a server that sends no Date: create exits %d (want 4):\n%s", lock, r.code, r.stderr)
		}
	}
}
