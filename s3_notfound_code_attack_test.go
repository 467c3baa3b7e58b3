package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"backup/backupset/s3store/s3test"
)

// TestAttackS3UnknownAccessKeySaysFileDoesNotExist: versitygw answers a request signed with
// an access key it does not know with 404 XAdminUserNotFound ("No user exists with the
// provided access key ID."). Every 404 was taken for a missing object, whatever the
// server's code, so each command said only `list s3://B/P/: file does not exist` (sets:
// `backup sets: file does not exist`, create: `create …/.backup.lock: file does not exist`),
// hiding the one thing to fix: the credentials. A 404 whose code does not say that an
// object (or an upload) is missing must be reported in the server's words, as any other
// error the server names is.
func TestAttackS3UnknownAccessKeySaysFileDoesNotExist(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)

	env := append(append([]string(nil), s.env...), "AWS_ACCESS_KEY_ID=nosuchkey", "AWS_MAX_ATTEMPTS=1")
	parent := s.loc[:strings.LastIndex(s.loc, "/")]
	for _, args := range [][]string{
		{"create", "-q", "--output-dir", s.loc, "app"},
		{"status", s.loc},
		{"verify", s.loc},
		{"sets", parent},
	} {
		r := backup(t, runOpts{dir: dir, env: env}, args...)
		if r.code != exitFailed || strings.Contains(r.stderr, "file does not exist") || !strings.Contains(r.stderr, "XAdminUserNotFound") {
			t.Errorf("%s with an unknown access key: exit %d, stderr %q; want exit 1 naming the server's error", args[0], r.code, r.stderr)
		}
	}
}

// TestAttackS3NotAnS3ServerSaysFileDoesNotExist: an endpoint that is no S3 server (a web
// server, a wrong port or path behind a proxy) answers every request 404 with no S3 error
// code. S3 never answers a listing so (a prefix with nothing under it lists empty, a missing
// bucket is NoSuchBucket), yet the listing's 404 was read as a missing object: `status`
// and `verify` said `list s3://B/P/: file does not exist`, `sets` only `file does not
// exist`.
func TestAttackS3NotAnS3ServerSaysFileDoesNotExist(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	env := append((&s3test.Server{Endpoint: srv.URL}).Env(), "AWS_MAX_ATTEMPTS=1")
	dir := t.TempDir()
	for _, args := range [][]string{{"status", "s3://bucket/set"}, {"verify", "s3://bucket/set"}, {"sets", "s3://bucket"}} {
		r := backup(t, runOpts{dir: dir, env: env}, args...)
		// The line names the location too: `sets` once said only the cause.
		if r.code != exitFailed || strings.Contains(r.stderr, "file does not exist") || !strings.Contains(r.stderr, "404") || !strings.Contains(r.stderr, args[1]) {
			t.Errorf("%s from a server that is not S3: exit %d, stderr %q; want exit 1 naming %s and saying what it answered", args[0], r.code, r.stderr, args[1])
		}
	}
}
