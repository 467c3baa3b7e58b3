package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset/s3store"
	"backup/backupset/s3store/s3test"
)

// s3Client is a plain S3 client on the test server, to look at (or do) what backup would not.
func s3Client(srv *s3test.Server) *s3.Client {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(s3test.AccessKey, s3test.SecretKey, "")}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(srv.Endpoint), true
	})
}

// uploadKeys lists the keys of the unfinished multipart uploads in a bucket under prefix.
func uploadKeys(t *testing.T, srv *s3test.Server, bucket, prefix string) []string {
	t.Helper()
	out, err := s3Client(srv).ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

// TestS3SetOwnsOnlyItsKeys holds a real run into s3://B/app/sub (SIGSTOP once its upload
// has started) while runs into the sets above it, s3://B/app and the bucket's root, create,
// activate and prune: the held run's upload survives them all, and once resumed it
// completes. Each of those runs used to abort every upload whose name merely ended like an
// archive's, "sub/big-….zip" included, so the held run failed (exit 1).
func TestS3SetOwnsOnlyItsKeys(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "big"), map[string]node{"random": {content: randomString(t, 40<<20)}})
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"a": {content: "a\n"}})
	makeTree(t, filepath.Join(dir, "other"), map[string]node{"o": {content: "o\n"}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: srv.Env()}, args...) }

	held := exec.Command(binary, "create", "--level", "0", "--output-dir", "s3://"+bucket+"/app/sub", "big")
	held.Dir, held.Env = dir, append(os.Environ(), srv.Env()...)
	var heldErr strings.Builder
	held.Stderr = &heldErr
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Process.Kill() })
	waitFor(t, "the held run's upload", func() bool { return len(uploadKeys(t, srv, bucket, "app/sub/")) > 0 })
	if err := held.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	heldKeys := uploadKeys(t, srv, bucket, "app/sub/")

	mustExit(t, run("create", "--output-dir", "s3://"+bucket+"/app", "src"), exitComplete)
	mustExit(t, run("create", "--output-dir", "s3://"+bucket, "other"), exitComplete)
	first := readLatest(t, filepath.Join(srv.Root, bucket, "app"))
	mustExit(t, run("create", "--output-dir", "s3://"+bucket+"/app", "src"), exitComplete)
	mustExit(t, run("activate", "s3://"+bucket+"/app", first), exitComplete)
	mustExit(t, run("prune", "--keep-last", "1", "s3://"+bucket), exitComplete)
	if got := uploadKeys(t, srv, bucket, "app/sub/"); strings.Join(got, " ") != strings.Join(heldKeys, " ") {
		t.Errorf("the held run's uploads after the other sets' runs: %q, want %q", got, heldKeys)
	}

	if err := held.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := held.Wait(); err != nil {
		t.Fatalf("the held run: %v; stderr:\n%s", err, heldErr.String())
	}
	sub := filepath.Join(srv.Root, bucket, "app", "sub")
	mustExit(t, run("verify", "s3://"+bucket+"/app/sub"), exitComplete)
	if name := readLatest(t, sub); !strings.HasPrefix(name, "big-") {
		t.Errorf("the held run's LATEST names %q", name)
	}
}

// listingProxy stands between backup and the server and adds extra to every object listing
// (ListObjectsV2) it passes on: a server that lists more than it was asked for.
func listingProxy(t *testing.T, target, extra string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || resp.Request.URL.Query().Get("list-type") != "2" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = bytes.Replace(body, []byte("</ListBucketResult>"), []byte(extra+"</ListBucketResult>"), 1)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestS3SetIgnoresForeignListedKeys: a server that lists the keys of a deeper set among a
// set's own (ignoring the delimiter) makes status and prune of the set see none of them,
// and prune deletes nothing of the deeper set. Before, its archive counted as one of the set's
// runs and prune deleted it.
func TestS3SetIgnoresForeignListedKeys(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: srv.Env()}, args...) }
	parent, sub := "s3://"+bucket+"/hosts/web1", "s3://"+bucket+"/hosts/web1/sub"
	mustExit(t, run("create", "--output-dir", sub, "app"), exitComplete)
	for range 2 {
		mustExit(t, run("create", "--output-dir", parent, "app"), exitComplete)
	}
	subDir := filepath.Join(srv.Root, bucket, "hosts", "web1", "sub")
	subArchives := setArchives(t, subDir)

	out, err := s3Client(srv).ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("hosts/web1/sub/")})
	if err != nil {
		t.Fatal(err)
	}
	var extra strings.Builder
	for _, o := range out.Contents {
		fmt.Fprintf(&extra, "<Contents><Key>%s</Key><Size>%d</Size><ETag>%s</ETag><StorageClass>STANDARD</StorageClass></Contents>",
			aws.ToString(o.Key), aws.ToInt64(o.Size), html.EscapeString(aws.ToString(o.ETag)))
	}
	proxy := listingProxy(t, srv.Endpoint, extra.String())

	r := run("status", "--json", "--s3-endpoint", proxy, parent)
	mustExit(t, r, exitComplete)
	if strings.Contains(r.stdout, "sub/") {
		t.Errorf("status of %s lists the deeper set's keys:\n%s", parent, r.stdout)
	}
	mustExit(t, run("prune", "--keep-last", "1", "--s3-endpoint", proxy, parent), exitComplete)
	if got := setArchives(t, subDir); strings.Join(got, " ") != strings.Join(subArchives, " ") {
		t.Errorf("after prune of %s the deeper set holds %v, want %v", parent, got, subArchives)
	}
	if got := setArchives(t, filepath.Join(srv.Root, bucket, "hosts", "web1")); len(got) != 2 {
		t.Errorf("after prune --keep-last 1 the set holds %v, want one archive and its receipt", got)
	}
	mustExit(t, run("verify", sub), exitComplete)
}

// TestS3SetLockHolderQuoted: the lock object is the bucket's to write, so its host name is
// text from outside: one holding a newline or an escape sequence is quoted in the one line
// that says the set is locked. Before, it forged a second line.
func TestS3SetLockHolderQuoted(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	lease := fmt.Sprintf(`{"host":"web1\nbackup: complete: 1 file\u001b]0;x\u0007","pid":42,"started":"2020-01-01T00:00:00Z","expires":"%s"}`,
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + ".backup.lock"),
		Body: strings.NewReader(lease)}); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitLocked || strings.Count(r.stderr, "\n") != 1 || strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `pid 42 on "web1\nbackup`) {
		t.Errorf("exit %d, stderr %q; want %d and one line naming the holder quoted", r.code, r.stderr, exitLocked)
	}
}

// TestS3SetRequestsStayInTheSet proves from the server's own access log that the runs of a
// set (create with its prune, prune, activate, the cleanup of a killed run's upload) ask
// for nothing of another set: not of the set nested below it, nor of the one above it, and
// that every listing stops at the next "/". Each set's runs carry their own application id in
// the User-Agent (AWS_SDK_UA_APP_ID), which the log records. A killed run's upload in the
// nested set survives the others' runs and is aborted by its own set's next run.
func TestS3SetRequestsStayInTheSet(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	makeTree(t, filepath.Join(dir, "big"), map[string]node{"random": {content: randomString(t, 20<<20)}})
	sets := map[string]string{"app": "s3://" + bucket + "/app", "sub": "s3://" + bucket + "/app/sub", "root": "s3://" + bucket}
	run := func(agent string, args ...string) result {
		return backup(t, runOpts{dir: dir, env: append(srv.Env(), "AWS_SDK_UA_APP_ID="+agent)}, args...)
	}

	killed := exec.Command(binary, "create", "--level", "0", "--output-dir", sets["sub"], "big")
	killed.Dir, killed.Env = dir, append(os.Environ(), append(srv.Env(), "AWS_SDK_UA_APP_ID=sub")...)
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upload of the run to kill", func() bool { return len(uploadKeys(t, srv, bucket, "app/sub/")) > 0 })
	killed.Process.Kill()
	killed.Wait()

	for range 2 {
		mustExit(t, run("app", "create", "-q", "--output-dir", sets["app"], "app"), exitComplete)
	}
	first := setArchives(t, filepath.Join(srv.Root, bucket, "app"))[0]
	mustExit(t, run("app", "activate", sets["app"], first), exitComplete)
	mustExit(t, run("app", "create", "-q", "--keep-last", "1", "--output-dir", sets["app"], "app"), exitComplete)
	mustExit(t, run("app", "prune", "--keep-last", "1", sets["app"]), exitComplete)
	mustExit(t, run("root", "create", "-q", "--keep-last", "1", "--output-dir", sets["root"], "app"), exitComplete)
	if got := uploadKeys(t, srv, bucket, "app/sub/"); len(got) != 1 {
		t.Fatalf("the killed run's uploads after the other sets' runs: %q, want its one", got)
	}
	mustExit(t, run("sub", "create", "-q", "--output-dir", sets["sub"], "app"), exitComplete)
	if got := uploadKeys(t, srv, bucket, ""); len(got) != 0 {
		t.Errorf("uploads left after the nested set's next run: %q", got)
	}

	time.Sleep(200 * time.Millisecond) // the server logs a request once it has answered it
	log, err := s3test.ReadAccessLog(srv.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	byAgent := map[string]int{}
	aborted := false
	for _, a := range log {
		byAgent[a.Agent]++
		aborted = aborted || a.Agent == "sub" && a.Op == "AbortMultipartUpload" && strings.HasPrefix(a.Key, "app/sub/big-")
	}
	if byAgent["app"] < 20 || byAgent["root"] < 5 || byAgent["sub"] < 5 {
		t.Fatalf("the access log holds %v requests by agent: the log or the agents are not recorded", byAgent)
	}
	if !aborted {
		t.Error("the access log shows no abort of the killed run's upload by its own set's next run")
	}
	for _, a := range s3test.Foreign(log, map[string]string{"app": "app/", "sub": "app/sub/", "root": ""}) {
		t.Errorf("a request of set %q reached beyond it: %s key %q query %v", a.Agent, a.Op, a.Key, a.Query)
	}
}
