package main

// Findings of the second adversarial pass (attack2): each test fails while its defect stands.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backup/backupset"
	"backup/backupset/s3store/s3test"
)

// answeringProxy passes requests on to target, except those answer gives a status for: it
// answers them itself with that status and an S3 error of that code.
func answeringProxy(t *testing.T, target string, answer func(r *http.Request) (int, string)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, code := answer(r); status != 0 {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(status)
			fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>injected</Message></Error>", code)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// envWithout is os.Environ's entries minus the variables named, plus add.
func envWithout(drop []string, add ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// TestAttack2DecEndpointPasswordEchoed: the SDK takes the endpoint from AWS_ENDPOINT_URL too
// (the variable for every service), which backup neither checks nor keeps out of its
// messages: an endpoint URL holding a password that the SDK cannot use is echoed whole, in
// the error line, in --json's receipt and in the hooks' BACKUP_ERROR. docs/s3.md: "an
// endpoint URL (flag or variable) that ... holds a user name or password are usage errors
// (exit 2, nothing written), and the credentials are not echoed"; "Credentials never appear
// in receipts, errors or --json".
func TestAttack2DecEndpointPasswordEchoed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	srv := &s3test.Server{Endpoint: "http://127.0.0.1:9"}
	var env []string
	for _, kv := range srv.Env() {
		if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL_S3=") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_MAX_ATTEMPTS=1", "AWS_ENDPOINT_URL=http://user:"+s3test.SecretKey+"@127.0.0.1:9/%zz")
	hook := filepath.Join(dir, "hook.out")
	runs := [][]string{
		{"create", "--output-dir", "s3://bucket/set", "--json", "--exec-after", `printf %s "$BACKUP_ERROR" > ` + hook, "app"},
		{"status", "--json", "s3://bucket/set"},
		{"verify", "s3://bucket/set"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir, env: envWithout([]string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}, env...)}, args...)
		if r.code != exitUsage {
			t.Errorf("%s: exit %d (%q), want %d: an endpoint URL holding a password is a usage error", args[0], r.code, r.stderr, exitUsage)
		}
		if strings.Contains(r.stdout+r.stderr, s3test.SecretKey) {
			t.Errorf("%s: exit %d; the endpoint's password is printed: stdout %q; stderr %q", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if data, _ := os.ReadFile(hook); strings.Contains(string(data), s3test.SecretKey) {
		t.Errorf("the hook's BACKUP_ERROR holds the endpoint's password: %q", data)
	}
}

// TestAttack2DecLockRaceConflictNotLocked: S3 answers 409 ConditionalRequestConflict to a
// conditional PutObject that races another write of the same key ("a conflicting operation
// occurred"; the loser may retry). Two runs racing for a set's lock object meet exactly that:
// the loser must exit 4 (the set is locked by another running backup), or wait with --wait.
// It exits 1 instead, as a failed run, its --wait ignored: the 409 on the lock's create is
// taken for a failed replace (ErrChanged), which tryLock does not treat as a held lock.
func TestAttack2DecLockRaceConflictNotLocked(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	// The winner of the race holds the lock: a live run of another host.
	putLease(t, s, backupset.Owner{Host: "web1-twin.example", Pid: 4242})
	var conflicts atomic.Int64
	proxy := answeringProxy(t, s.srv.Endpoint, func(r *http.Request) (int, string) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+backupset.LockName) && r.Header.Get("If-None-Match") == "*" && conflicts.Add(1) == 1 {
			return http.StatusConflict, "ConditionalRequestConflict"
		}
		return 0, ""
	})
	env := append(slices.Clone(s.env), "AWS_ENDPOINT_URL_S3="+proxy)
	r := backup(t, runOpts{dir: dir, env: env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitLocked {
		t.Errorf("create that lost the race for the lock: exit %d, want %d (locked); stderr:\n%s", r.code, exitLocked, r.stderr)
	}
}

// TestAttack2DecReceiptPathForgesLines: the archive path a receipt in the set records is text
// anyone who can write the set (a bucket's other writers) controls. When it names another
// archive than its own, status, verify, list, prune (and status's table for any run) print
// its base name raw inside their reason: a newline forges a line of backup's own ("ok: ...")
// and an escape sequence drives the terminal. docs/operations.md: "Text that embeds a name (a
// reason, an error) has such bytes escaped the same way, so no name can forge a line or drive
// the terminal"; docs/s3.md: text from the bucket is "quoted when it holds a newline, control
// or format character, so it can never forge a line of backup's own". (backup sets quotes it.)
func TestAttack2DecReceiptPathForgesLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	receipt := filepath.Join(set, readLatest(t, set)+".receipt.json")
	data, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	const forged = "ok: LATEST forged.zip is complete"
	rc["archive"].(map[string]any)["path"] = "/x/evil\n" + forged + "\x1b]0;owned\a"
	if data, err = json.Marshal(rc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(receipt, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status", set}, {"verify", set}, {"list", set}, {"prune", "--keep-last", "1", set}} {
		r := backup(t, runOpts{dir: dir}, args...)
		out := r.stdout + r.stderr
		if strings.Contains(out, "\n"+forged) || strings.Contains(out, "\x1b") {
			t.Errorf("%s: exit %d; a receipt's archive path forged a line or reached the terminal raw:\n%s", args[0], r.code, out)
		}
	}
}

// TestAttack2DecActivationRecordForgesLines: LATEST.activated is a file of the set (an object
// of the bucket), written by anyone who can write there; its "by" is printed raw in status's
// note on a hand-made activation: a newline forges a line, an escape drives the terminal.
func TestAttack2DecActivationRecordForgesLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	first := readLatest(t, set)
	time.Sleep(1100 * time.Millisecond) // a second run in another second
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "activate", set, first), exitComplete)
	const forged = "ok: LATEST forged.zip is complete"
	record, err := json.Marshal(map[string]string{"archive": first, "activated_at": time.Now().UTC().Format(time.RFC3339), "by": "activate\n" + forged + "\x1b]0;owned\a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, "LATEST.activated"), record, 0o644); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "status", set)
	if out := r.stdout + r.stderr; strings.Contains(out, "\n"+forged) || strings.Contains(out, "\x1b") {
		t.Errorf("status: exit %d; LATEST.activated's \"by\" forged a line or reached the terminal raw:\n%s", r.code, out)
	}
}
