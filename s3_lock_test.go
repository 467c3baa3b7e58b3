package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/backupset/s3store/s3test"
)

// TestS3SetLockOwner puts lock objects into a set in a bucket and runs create against each:
// a lock whose holder ran on this host (same boot, same pid namespace) and is gone, or whose
// pid now names a process that started at another time, is stale at once; a lock of a live
// process here, of another host, or one that does not name its holder that precisely stands
// until its lease runs out (exit 4).
func TestS3SetLockOwner(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	waitFor(t, "sleep to start", func() bool { return ownerOf(live.Process.Pid).ProcStart != 0 })
	here := ownerOf(live.Process.Pid)
	with := func(edit func(o *backupset.Owner)) backupset.Owner {
		o := here
		edit(&o)
		return o
	}
	tests := []struct {
		name  string
		owner backupset.Owner
		want  int
	}{
		{"killed here", with(func(o *backupset.Owner) { o.Pid = dead.Process.Pid }), exitComplete},
		{"pid reused here", with(func(o *backupset.Owner) { o.ProcStart++ }), exitComplete},
		{"alive here", here, exitLocked},
		{"another host", with(func(o *backupset.Owner) { o.Host, o.Pid = "elsewhere.example", dead.Process.Pid }), exitLocked},
		{"host and pid only", backupset.Owner{Host: here.Host, Pid: dead.Process.Pid}, exitLocked},
	}
	for _, tt := range tests {
		putLease(t, s, tt.owner)
		r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app")
		if r.code != tt.want {
			t.Errorf("%s: create exit %d, want %d; stderr:\n%s", tt.name, r.code, tt.want, r.stderr)
		}
		if tt.want == exitLocked && !strings.Contains(r.stderr, "another backup of this set is running") {
			t.Errorf("%s: stderr %q, want the holder named", tt.name, r.stderr)
		}
		took := "backup: " + s.loc + ": took over the lock of pid " + strconv.Itoa(tt.owner.Pid) + " on " + tt.owner.Host + ", which is no longer running\n"
		if tt.want == exitComplete && !strings.HasPrefix(r.stderr, took) {
			t.Errorf("%s: stderr %q, want it to start with %q", tt.name, r.stderr, took)
		}
	}
	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	if _, err := s3Client(s.srv).DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName)}); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app")
	if r.code != exitComplete || strings.Contains(r.stderr, "took over") {
		t.Errorf("a run on a free lock: exit %d, stderr %q; want 0 and no takeover said", r.code, r.stderr)
	}
}

// ownerOf names process pid on this host as a lock names its holder; its start time is 0
// while it cannot be read.
func ownerOf(pid int) backupset.Owner {
	o := backupset.ThisProcess()
	o.Pid, o.ProcStart = pid, 0
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if i := strings.LastIndexByte(string(data), ')'); err == nil && i > 0 {
		// Field 22, counted from the third, which follows the command's ')'.
		if fields := strings.Fields(string(data[i+1:])); len(fields) > 19 {
			o.ProcStart, _ = strconv.ParseUint(fields[19], 10, 64)
		}
	}
	return o
}

// putLease writes the set's lock object, held by owner for the next five minutes, as a run
// would.
func putLease(t *testing.T, s s3Set, owner backupset.Owner) {
	t.Helper()
	now := time.Now().UTC()
	lease := struct {
		backupset.Owner
		Started time.Time `json:"started"`
		Expires time.Time `json:"expires"`
	}{owner, now, now.Add(5 * time.Minute)}
	data, err := json.Marshal(lease)
	if err != nil {
		t.Fatal(err)
	}
	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(s3test.AccessKey, s3test.SecretKey, "")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(s.srv.Endpoint), true
	})
	_, err = client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName), Body: strings.NewReader(string(data))})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAttackLockRaceConflictNotLocked: S3 answers 409 ConditionalRequestConflict to a
// conditional PutObject that races another write of the same key ("a conflicting operation
// occurred"; the loser may retry). Two runs racing for a set's lock object meet exactly that:
// the loser must exit 4 (the set is locked by another running backup), or wait with --wait.
// It exits 1 instead, as a failed run, its --wait ignored: the 409 on the lock's create is
// taken for a failed replace (ErrChanged), which tryLock does not treat as a held lock.
func TestAttackLockRaceConflictNotLocked(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	// The winner of the race holds the lock: a live run of another host.
	putLease(t, s, backupset.Owner{Host: "web1-twin.example", Pid: 4242})
	var conflicts atomic.Int64
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, _ string, _ int) fault {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+backupset.LockName) && r.Header.Get("If-None-Match") == "*" && conflicts.Add(1) == 1 {
			return status409
		}
		return pass
	})
	env := append(slices.Clone(s.env), "AWS_ENDPOINT_URL_S3="+proxy)
	r := backup(t, runOpts{dir: dir, env: env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitLocked {
		t.Errorf("create that lost the race for the lock: exit %d, want %d (locked); stderr:\n%s", r.code, exitLocked, r.stderr)
	}
}
