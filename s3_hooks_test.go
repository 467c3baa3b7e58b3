package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestS3SetHooksGetTheReceipt runs --exec-after hooks on a set in a bucket, after a complete
// and after a failed run: BACKUP_RECEIPT names a local copy of the receipt the run wrote
// (gone once the hooks end), the bucket's receipt records the hooks, and nothing is written
// at a local path named s3://…. Before, BACKUP_RECEIPT was empty, the bucket's receipt had no
// hooks, and the failed run tried to write the local file "s3://BUCKET/…".
func TestS3SetHooksGetTheReceipt(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	hook := `test -f "$BACKUP_RECEIPT" && cp "$BACKUP_RECEIPT" seen-$BACKUP_STATUS.json && echo "$BACKUP_RECEIPT" > path-$BACKUP_STATUS`
	run := func() result {
		return backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--exec-after", hook, "--exec-after", "exit 3", "app")
	}
	for _, status := range []string{"complete", "failed"} {
		if status == "failed" {
			os.RemoveAll(filepath.Join(dir, "app"))
		}
		r := run()
		mustExit(t, r, map[string]int{"complete": exitComplete, "failed": exitFailed}[status])
		archives := setArchives(t, s.dir)
		inBucket := readReceipt(t, filepath.Join(s.dir, archives[len(archives)-1]))
		if inBucket.Status != format.Status(status) || len(inBucket.Hooks) != 2 || inBucket.Hooks[0].ExitCode != 0 || inBucket.Hooks[1].ExitCode != 3 {
			t.Errorf("%s run: the bucket's receipt %s, hooks %+v; want both after hooks, exit 0 and 3", status, inBucket.Status, inBucket.Hooks)
		}
		data, err := os.ReadFile(filepath.Join(dir, "seen-"+status+".json"))
		if err != nil {
			t.Fatalf("%s run: the hook found no receipt at BACKUP_RECEIPT: %v; stderr:\n%s", status, err, r.stderr)
		}
		var seen format.Receipt
		if err := json.Unmarshal(data, &seen); err != nil || seen.Status != inBucket.Status || !seen.StartedAt.Equal(inBucket.StartedAt) {
			t.Errorf("%s run: the hook's receipt %s (%v), want the bucket's, %s", status, seen.Status, err, inBucket.Status)
		}
		path, _ := os.ReadFile(filepath.Join(dir, "path-"+status))
		copyPath := strings.TrimSpace(string(path))
		if strings.Contains(copyPath, "s3:") || !filepath.IsAbs(copyPath) {
			t.Errorf("%s run: BACKUP_RECEIPT %q, want a local absolute path", status, copyPath)
		}
		if _, err := os.Lstat(copyPath); err == nil {
			t.Errorf("%s run: the receipt's copy %s outlived the hooks", status, copyPath)
		}
		if strings.Contains(r.stderr, "could not") {
			t.Errorf("%s run: stderr %q", status, r.stderr)
		}
	}
	if extra := leftovers(t, dir, "seen-complete.json", "path-complete", "seen-failed.json", "path-failed"); len(extra) > 0 {
		t.Errorf("left in the working folder: %v", extra)
	}
}
