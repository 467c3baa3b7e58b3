package main

import (
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
