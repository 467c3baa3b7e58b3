package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3MistypedLocation: a location meant for a bucket but mistyped (S3://, s3:/,
// s3:BUCKET) is not an s3:// location, and was taken for a folder: create --output-dir
// made ./S3:/BUCKET/PREFIX in the working folder, backed up into it and exited 0, so the
// user believed the backup was in the bucket; status, prune and the readers said the
// folder held no backup yet. Every command refuses it now (exit 2, nothing made), naming
// the two ways to say what was meant.
func TestAttackS3MistypedLocation(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{"S3://bucket/hosts/web1", "s3:/bucket/hosts/web1", "s3:bucket/hosts/web1", "S3:bucket"} {
		for _, args := range [][]string{
			{"create", "--output-dir", loc, "app"},
			{"create", "-o", loc + ".zip", "app"},
			{"status", loc},
			{"prune", "--keep-last", "1", loc},
			{"activate", loc, "app-20260101T000000Z.zip"},
			{"sets", loc},
			{"verify", loc},
			{"list", loc},
			{"restore", loc, "dest"},
			{"adopt", loc, "app.zip"},
		} {
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
			before := 1
			if args[0] == "adopt" {
				mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "app.zip", "app"), exitComplete)
				before = 3 // the archive and its receipt
			}
			r := backup(t, runOpts{dir: dir}, args...)
			entries, _ := os.ReadDir(dir)
			if r.code != exitUsage || len(entries) != before || !strings.Contains(r.stderr, "s3://") {
				names := []string{}
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("backup %s: exit %d (want 2, naming s3://), the working folder holds %q:\n%s%s", strings.Join(args, " "), r.code, names, r.stdout, r.stderr)
			}
		}
	}
}

// TestAttackS3RestoreDestInABucket: restore's DEST is a folder on this machine. Given as
// s3://BUCKET/PREFIX (as if restore copied a set into a bucket), it was taken for the path
// ./s3:/BUCKET/PREFIX, made and filled, and the run said "restored to s3://…", exit 0.
func TestAttackS3RestoreDestInABucket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "app.zip", "app"), exitComplete)
	for _, dest := range []string{"s3://bucket/restored", "S3://bucket/restored", "s3:restored"} {
		r := backup(t, runOpts{dir: dir}, "restore", "app.zip", dest)
		entries, _ := os.ReadDir(dir)
		if r.code != exitUsage || len(entries) != 3 {
			t.Errorf("restore app.zip %s: exit %d (want 2), the working folder holds %d entries (want 3):\n%s%s", dest, r.code, len(entries), r.stdout, r.stderr)
		}
	}
}
