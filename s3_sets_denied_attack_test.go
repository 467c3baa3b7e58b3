package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3SetsCallsDeniedSetDamaged: a monitoring account's credentials may list the
// bucket but not read one set's objects (a bucket policy per host's prefix). `sets` called
// that set damaged, a verdict on backups it could not read, where a folder set this user
// may not read is unreadable (43190c5). The server's 403 AccessDenied is now a permission
// error like a folder's EACCES: the set is unreadable, still unhealthy (exit 1), with its
// line on stderr naming the refusal; the other sets are read as before.
func TestAttackS3SetsCallsDeniedSetDamaged(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	bucket := strings.Split(s.loc, "/")[2]
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	for _, set := range []string{"hosts/web1", "hosts/web2"} {
		mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", "s3://"+bucket+"/"+set, "app"), exitComplete)
	}
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, _ int) fault {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/hosts/web2/") {
			return status403
		}
		return pass
	})
	r := backup(t, runOpts{dir: dir, env: s.env}, "sets", "--s3-endpoint", proxy, "s3://"+bucket+"/hosts")
	mustExit(t, r, exitFailed)
	loc := func(set string) string { return "s3://" + bucket + "/" + set }
	want := []string{"unreadable " + loc("hosts/web2"), "ok " + loc("hosts/web1")}
	if got := setsColumn(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sets:\n%s\nwant the rows %q", r.stdout, want)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, loc("hosts/web2")) || !strings.Contains(r.stderr, "AccessDenied (HTTP 403)") {
		t.Errorf("stderr %q; want one line naming web2 and the server's refusal", r.stderr)
	}
}

// TestS3DryRunWithReadOnlyCredentials: credentials that may read a set in a bucket but not
// write to it (a monitoring account's) are refused the set's lock (403). A dry run reads a
// set it cannot lock, as it does a folder it may not write: prune --dry-run shows its plan,
// exit 0, and writes nothing; a real prune is refused, exit 1, naming the refusal.
func TestS3DryRunWithReadOnlyCredentials(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	proxy, seen := startFaultProxy(t, s.srv.Endpoint, func(kind string, _ int) fault {
		if kind == http.MethodPut || kind == http.MethodPost || kind == http.MethodDelete {
			return status403
		}
		return pass
	})
	r := backup(t, runOpts{dir: dir, env: s.env}, "prune", "--dry-run", "--keep-last", "1", "--s3-endpoint", proxy, s.loc)
	if r.code != exitComplete || !strings.Contains(r.stdout, "keep") {
		t.Errorf("prune --dry-run with read-only credentials: exit %d\n%s%s; want 0 and the plan", r.code, r.stdout, r.stderr)
	}
	r = backup(t, runOpts{dir: dir, env: s.env}, "prune", "--keep-last", "1", "--s3-endpoint", proxy, s.loc)
	if r.code != exitFailed || !strings.Contains(r.stderr, "AccessDenied (HTTP 403)") {
		t.Errorf("prune with read-only credentials: exit %d, stderr %q; want 1 naming the refusal", r.code, r.stderr)
	}
	if n := seen(http.MethodDelete); n != 0 {
		t.Errorf("%d DELETE requests; the dry run and the refused prune delete nothing", n)
	}
}
