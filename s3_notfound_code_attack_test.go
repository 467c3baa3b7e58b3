package main

import (
	"path/filepath"
	"strings"
	"testing"
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
