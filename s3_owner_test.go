package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

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
