package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/format"
)

// TestS3Sets runs backup sets over a bucket's prefix that holds sets at two depths, one
// stale, and a set whose only run was killed (a lock object and nothing else), through a
// proxy that counts the requests: one listing of the whole prefix, two small GETs per set
// with a LATEST (LATEST and its archive's receipt), and nothing else: no HEAD, no archive
// read, no lock, no write.
func TestS3Sets(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	bucket := strings.Split(s.loc, "/")[2]
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	sets := []string{"hosts/web1", "hosts/web1/sub", "hosts/web2", "hosts/web3"}
	for _, set := range sets {
		mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", "s3://"+bucket+"/"+set, "app"), exitComplete)
	}
	root := filepath.Join(s.srv.Root, bucket)
	ageLatestS3(t, s, bucket, "hosts/web2", 72*time.Hour)
	makeTree(t, filepath.Join(root, "hosts/killed"), map[string]node{".backup.lock": {content: `{"host":"h","pid":1}`}})
	makeTree(t, filepath.Join(root, "elsewhere"), map[string]node{"notes.txt": {content: "not a set"}})

	proxy, seen := startFaultProxy(t, s.srv.Endpoint, func(string, int) fault { return pass })
	r := backup(t, runOpts{dir: dir, env: s.env}, "sets", "--max-age", "26h", "--s3-endpoint", proxy, "s3://"+bucket+"/hosts")
	mustExit(t, r, exitFailed)
	loc := func(set string) string { return "s3://" + bucket + "/" + set }
	want := []string{"missing " + loc("hosts/killed"), "stale " + loc("hosts/web2"), "ok " + loc("hosts/web1"),
		"ok " + loc("hosts/web1/sub"), "ok " + loc("hosts/web3")}
	if got := setsColumn(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sets:\n%s\nwant the rows %q", r.stdout, want)
	}
	if strings.Count(r.stderr, "\n") != 2 || !strings.Contains(r.stderr, "backup sets: no backup in "+loc("hosts/killed")+" yet") {
		t.Errorf("stderr %q; want one line for each unhealthy set", r.stderr)
	}
	counts := map[string]int{}
	for _, kind := range []string{"list", "list uploads", "GET", "HEAD", "PUT", "POST", "DELETE", "ranged read", "part", "complete"} {
		counts[kind] = seen(kind)
	}
	wantCounts := map[string]int{"list": 1, "GET": 2 * len(sets)}
	for kind, n := range counts {
		if n != wantCounts[kind] {
			t.Errorf("%d %s requests, want %d (all: %v)", n, kind, wantCounts[kind], counts)
		}
	}
}

// ageLatestS3 moves the start of the backup LATEST names in the set at prefix back by d, in
// its receipt, rewritten through the server (whose objects carry their checksums).
func ageLatestS3(t *testing.T, s s3Set, bucket, prefix string, d time.Duration) {
	t.Helper()
	dir := filepath.Join(s.srv.Root, bucket, prefix)
	name := readLatest(t, dir) + format.ReceiptSuffix
	rc := readReceipt(t, filepath.Join(dir, name))
	rc.StartedAt, rc.FinishedAt = rc.StartedAt.Add(-d), rc.FinishedAt.Add(-d)
	data, err := rc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + "/" + name),
		Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}

// TestS3SetsListsPages: a prefix of more keys than a page of the listing holds (1,000) is
// listed page by page, as one listing, and each set is still read with two GETs.
func TestS3SetsListsPages(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	junk := map[string]node{}
	for i := range 1100 {
		junk[fmt.Sprintf("f%04d", i)] = node{content: "x"}
	}
	makeTree(t, filepath.Join(filepath.Dir(s.dir), "junk"), junk)
	proxy, seen := startFaultProxy(t, s.srv.Endpoint, func(string, int) fault { return pass })
	parent := s.loc[:strings.LastIndex(s.loc, "/")]
	r := backup(t, runOpts{dir: dir, env: s.env}, "sets", "--s3-endpoint", proxy, parent)
	mustExit(t, r, exitComplete)
	if got := setsColumn(r.stdout); len(got) != 1 || got[0] != "ok "+s.loc {
		t.Errorf("sets: %q, want %s alone", got, s.loc)
	}
	if seen("list") != 2 || seen("GET") != 2 {
		t.Errorf("%d list pages and %d GETs, want 2 and 2", seen("list"), seen("GET"))
	}
}

// TestAttackS3LostLatestLetsPlaintextIntoEncryptedBucket: the bucket form of
// TestAttackLostLatestLetsPlaintextIntoEncryptedSet, where it matters most ("a set in a
// bucket reveals no file name and no content"): with the LATEST object gone (a lifecycle
// rule, a bad cleanup, anyone who may delete in the prefix), a host whose timer lost its
// --recipient uploads app-….zip in clear, with the source's name in the key, next to the
// encrypted runs, and takes LATEST.
// Correct: refused (exit 2, nothing uploaded), the kind taken from the newest run when
// LATEST cannot tell.
func TestAttackS3LostLatestLetsPlaintextIntoEncryptedBucket(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"secret-name.txt": {content: "secret content\n"}})
	run := func(args ...string) result { return backup(t, runOpts{dir: dir, env: s.env}, args...) }
	mustExit(t, run("create", "--output-dir", s.loc, "--recipient", id.Recipient().String(), "app"), exitComplete)
	mustExit(t, run("create", "--output-dir", s.loc, "app"), exitUsage)
	if err := os.Remove(filepath.Join(s.dir, "LATEST")); err != nil {
		t.Fatal(err)
	}
	r := run("create", "--output-dir", s.loc, "app")
	plain, _ := filepath.Glob(filepath.Join(s.dir, "app-*.zip"))
	if r.code != exitUsage || len(plain) > 0 {
		t.Errorf("a plain run into the encrypted bucket set without LATEST: exit %d, uploaded %v; want %d and nothing uploaded:\n%s",
			r.code, plain, exitUsage, r.stderr)
	}
}
