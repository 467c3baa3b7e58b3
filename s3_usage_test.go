package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"backup/backupset/s3store/s3test"
)

// TestS3LocationUsageOneRule: every command that takes an s3:// set treats a bad location or
// an endpoint URL holding credentials (by flag or by AWS_ENDPOINT_URL_S3) the same way, as a
// usage error (exit 2, one line and the hint), before it reaches any server, and never
// echoes the secret. verify, list and restore used to exit 1 where the others gave 2.
func TestS3LocationUsageOneRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	secret := s3test.SecretKey
	withCreds := "http://AK:" + secret + "@127.0.0.1:9"
	commands := []struct {
		name string
		args func(loc string) []string
	}{
		{"create", func(loc string) []string { return []string{"create", "--output-dir", loc, "app"} }},
		{"status", func(loc string) []string { return []string{"status", loc} }},
		{"prune", func(loc string) []string { return []string{"prune", "--keep-last", "1", loc} }},
		{"activate", func(loc string) []string { return []string{"activate", loc, "app-20250101T000000Z.zip"} }},
		{"verify", func(loc string) []string { return []string{"verify", loc} }},
		{"list", func(loc string) []string { return []string{"list", loc} }},
		{"restore", func(loc string) []string { return []string{"restore", loc, "out"} }},
	}
	bad := []struct {
		name  string
		loc   string
		flags []string
		env   []string
		want  string
	}{
		{"endpoint flag with credentials", "s3://bucket/set", []string{"--s3-endpoint", withCreds}, nil, "user name or password"},
		{"endpoint variable with credentials", "s3://bucket/set", nil, []string{"AWS_ENDPOINT_URL_S3=" + withCreds}, "user name or password"},
		{"endpoint with a query", "s3://bucket/set", []string{"--s3-endpoint", "http://127.0.0.1:9/?token=" + secret}, nil, "holds a query"},
		{"endpoint not http", "s3://bucket/set", []string{"--s3-endpoint", "ftp://127.0.0.1:9"}, nil, "want an http:// or https:// URL"},
		{"endpoint with credentials and no scheme", "s3://bucket/set", []string{"--s3-endpoint", "AK:" + secret + "@127.0.0.1:9"}, nil, "not an http:// or https:// URL"},
		{"endpoint variable with credentials and no scheme", "s3://bucket/set", nil, []string{"AWS_ENDPOINT_URL_S3=AK:" + secret + "@127.0.0.1:9"}, "not an http:// or https:// URL"},
		{"no bucket", "s3:///set", nil, nil, "no bucket named"},
		{"dot-dot prefix", "s3://bucket/a/../b", nil, nil, "segment"},
		{"credentials in the location", "s3://AK:" + secret + "@bucket/set", nil, nil, "not a bucket name"},
	}
	for _, b := range bad {
		for _, c := range commands {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				args := append(c.args(b.loc), b.flags...)
				env := append((&s3test.Server{Endpoint: "http://127.0.0.1:9"}).Env(), "AWS_MAX_ATTEMPTS=1")
				r := backup(t, runOpts{dir: dir, env: append(env, b.env...)}, args...)
				lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
				if r.code != exitUsage || len(lines) != 2 || !strings.Contains(lines[0], b.want) || !strings.HasPrefix(lines[1], "Run 'backup help") {
					t.Errorf("%q: exit %d, stderr %q; want %d, one line saying %q and the hint", args, r.code, r.stderr, exitUsage, b.want)
				}
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("%q printed the secret: %q", args, r.stdout+r.stderr)
				}
			})
		}
	}
}

// TestS3ServerTextQuoted: an error a server sends is text from outside, printed on one line:
// a message holding a newline, a tab or a bidi override cannot forge a line of backup's own
// ("backup: complete: …") nor reorder the terminal's text, and a long one is cut. Before,
// the message was printed raw.
func TestS3ServerTextQuoted(t *testing.T) {
	t.Parallel()
	msg := "denied\nbackup: complete: 1 file\t\u202e" + strings.Repeat("x", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>%s</Message></Error>`, msg)
	}))
	t.Cleanup(srv.Close)
	env := (&s3test.Server{Endpoint: srv.URL}).Env()
	for _, args := range [][]string{{"status", "s3://bucket/set"}, {"verify", "s3://bucket/set"}, {"list", "s3://bucket/set"}} {
		r := backup(t, runOpts{dir: t.TempDir(), env: env}, args...)
		if r.code != exitFailed || strings.Count(r.stderr, "\n") != 1 || strings.ContainsAny(r.stderr, "\t\u202e") ||
			!strings.Contains(r.stderr, `AccessDenied (HTTP 403): "denied\nbackup: complete: 1 file\t\u202exxx`) || len(r.stderr) > 1000 {
			t.Errorf("%v: exit %d, stderr %q; want %d, one line with the server's message quoted and cut", args, r.code, r.stderr, exitFailed)
		}
	}
}
