package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/backupset/s3store/s3test"
	"backup/format"
)

// TestAttackS3StatusMetricsStaleWhenConfigUnreadable: docs/operations.md says `backup status
// --metrics-file PATH DIR` writes its metrics "also when the set cannot be read:
// backup_set_healthy 0", and showStatus says "A set that cannot be read is not healthy: the
// metrics must stop saying it is". A set in a bucket whose AWS configuration cannot be loaded
// (AWS_PROFILE naming a profile that is gone, a credentials file a rotation left half
// written) cannot be read either; but status takes that for a usage error (exit 2) before it
// reaches showStatus, and the metrics file of the last good check stays in place, saying
// healthy 1 for as long as the configuration stays broken.
func TestAttackS3StatusMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	prom := filepath.Join(dir, "set.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "status", "--metrics-file", prom, s.loc), exitComplete)
	healthy := `backup_set_healthy{set="` + s.loc + `"}`
	if v := metricValue(t, prom, healthy); v != 1 {
		t.Fatalf("a healthy set: %s %v", healthy, v)
	}

	// The profile the cron job names is gone from the configuration.
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "status", "--metrics-file", prom, s.loc)
	if r.code == exitComplete {
		t.Fatalf("status with an unloadable AWS configuration: exit 0")
	}
	if r.code != exitFailed {
		t.Errorf("status with an unloadable AWS configuration: exit %d (usage), want 1 (the set cannot be read); stderr %q", r.code, r.stderr)
	}
	if v := metricValue(t, prom, healthy); v != 0 {
		data, _ := os.ReadFile(prom)
		t.Errorf("the set could not be read, but the metrics file still says %s %v (left from the last check):\n%s", healthy, v,
			strings.TrimSpace(string(data)))
	}
}

// TestAttackS3CreateMetricsStaleWhenConfigUnreadable: the same for create. docs/operations.md:
// `create --metrics-file` is written "after every outcome once the flags parse: complete,
// incomplete, failed, interrupted, and a set the run could not take — locked by another run,
// refused by the bucket…". A run whose AWS configuration cannot be loaded (AWS_PROFILE naming
// a profile that is gone) could not take its set either, but it exits 2 as a usage error:
// the metrics file keeps the last run's exit code 0 and status complete.
func TestAttackS3CreateMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	prom := filepath.Join(dir, "run.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--metrics-file", prom, "--output-dir", s.loc, "app"), exitComplete)
	code := `backup_last_exit_code{set="` + s.loc + `"}`
	if v := metricValue(t, prom, code); v != 0 {
		t.Fatalf("a complete run: %s %v", code, v)
	}
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "create", "--metrics-file", prom, "--output-dir", s.loc, "app")
	if r.code == exitComplete {
		t.Fatalf("create with an unloadable AWS configuration: exit 0")
	}
	if v := metricValue(t, prom, code); v != float64(r.code) {
		t.Errorf("the run exited %d (%q), but the metrics file still says %s %v (the last run's)", r.code, r.stderr, code, v)
	}
}

// TestAttackS3SetsMetricsStaleWhenConfigUnreadable: the same for backup sets, whose
// metrics file docs/operations.md describes as "backup_sets_listed: 1 when the location
// could be listed; 0 when not, and then the file holds nothing else". An unloadable AWS
// configuration is a usage error (exit 2) and the file of the last listing stays: listed 1,
// every set healthy.
func TestAttackS3SetsMetricsStaleWhenConfigUnreadable(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	fleet := strings.TrimSuffix(s.loc, "/web1")
	prom := filepath.Join(dir, "sets.prom")
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "sets", "--metrics-file", prom, fleet), exitComplete)
	if v := metricValue(t, prom, "backup_sets_listed"); v != 1 {
		t.Fatalf("a listed fleet: backup_sets_listed %v", v)
	}
	r := backup(t, runOpts{dir: dir, env: append(s.env, "AWS_PROFILE=nightly")}, "sets", "--metrics-file", prom, fleet)
	if r.code == exitComplete {
		t.Fatalf("sets with an unloadable AWS configuration: exit 0")
	}
	if v := metricValue(t, prom, "backup_sets_listed"); v != 0 {
		t.Errorf("sets exited %d (%q), but the metrics file still says backup_sets_listed %v (the last listing's)", r.code, r.stderr, v)
	}
}

// loopingListProxy passes every request on to target, except listings (ListObjectsV2 and
// ListMultipartUploads), which it answers itself with one page that says more follow, under
// the same continuation token every time: a server whose paging is broken.
func loopingListProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	var lists atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet && q.Get("list-type") == "2":
			lists.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>%s</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>again</NextContinuationToken></ListBucketResult>`, q.Get("prefix"))
		case r.Method == http.MethodGet && q.Has("uploads"):
			lists.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket><Prefix>%s</Prefix><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker>again</NextKeyMarker><NextUploadIdMarker>again</NextUploadIdMarker><MaxUploads>1000</MaxUploads><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>`, q.Get("prefix"))
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &lists
}

// TestAttackS3ListingThatNeverEnds: docs/s3.md promises that a server cannot hold a run
// ("Every request has a deadline on progress … so a stalled server fails the run (exit 1)
// … instead of holding it"), and attacks.md lists "a server that … returns other bytes". A
// server whose listing says "more follows" under the continuation token it was just given
// (a paging bug) answers every request at once, so no deadline fires: status, prune and
// sets page through it for ever, each page a request, their memory growing, and never
// exit; create does so holding the set's lock, which it renews, so no other host's run
// gets the set either. The SDK's paginators stop on a repeated token only when asked
// (StopOnDuplicateToken); backup does not ask.
func TestAttackS3ListingThatNeverEnds(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	proxy, lists := loopingListProxy(t, s.srv.Endpoint)
	env := append(slices.Clone(s.env), "AWS_ENDPOINT_URL_S3="+proxy)
	fleet := strings.TrimSuffix(s.loc, "/web1")
	for _, args := range [][]string{
		{"create", "--output-dir", s.loc, "app"}, // holding the set's lock, renewed for ever
		{"status", s.loc},
		{"sets", fleet},
	} {
		before := lists.Load()
		cmd := exec.Command(binary, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
			if cmd.ProcessState.ExitCode() == exitComplete {
				t.Errorf("%v through a listing that never ends: exit 0", args)
			}
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%v through a listing that never ends: still running after 3s, %d listing requests made (stderr %q)",
				args, lists.Load()-before, stderr.String())
		}
	}
}

// TestAttackCiphertextCheckReadErrorClaimsDamage: the rule TestAttackSealedEIO holds verify
// --identity to ("a command that met an I/O error says "input/output error" … no damage or
// tampering is claimed for a failed read") is broken by the check made without a key.
// seal.Sum, which hashes the ciphertext for verify without --identity and for the
// read-back of a write-only host's run, stops at the first read that fails and returns the
// bytes it hashed as if they were the whole file: the read error becomes "archive is 0
// bytes, the receipt says N", a claim that the archive is damaged (cut short), and the
// error itself is never said.
func TestAttackCiphertextCheckReadErrorClaimsDamage(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r.bin": {content: randomString(t, 3<<20)}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "set"), "--recipient", key.recipient, "app"), exitComplete)
	arch := filepath.Join(dir, "set", readLatest(t, filepath.Join(dir, "set")))
	hit := 0
	for n := 2; n <= 6; n++ { // #1, the sniff of the age magic: TestAttackVerifySniffReadErrorSaysNoIdentity
		failed, out, code := withEIO(t, dir, arch, n, "verify", arch)
		if len(failed) == 0 {
			continue
		}
		hit++
		if !strings.Contains(out, "input/output error") || code == 0 {
			t.Errorf("backup verify (no key): EIO injected at pread64 #%d of the encrypted archive, exit %d, and no word of it:\n%s",
				n, code, lastLines(out, 3))
		}
		if strings.Contains(out, "the receipt says") {
			t.Errorf("backup verify (no key): EIO injected at pread64 #%d of the encrypted archive: claimed as damage:\n%s", n, lastLines(out, 3))
		}
	}
	if hit == 0 {
		t.Fatal("no pread64 of the archive was failed")
	}
}

// TestAttackS3WriteOnlyReadBackErrorClaimsDamage: the same in a write-only host's run into a
// bucket. Its read-back (ciphertext: size, SHA-256, age header) meets a server that fails
// the ranged reads (500, every attempt): the run fails, as it should, but says the archive
// "failed verification: archive is 0 bytes, the receipt says N" (damaged, cut short on the
// server), where it could not read it back at all; the server's error is never named.
func TestAttackS3WriteOnlyReadBackErrorClaimsDamage(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"r.bin": {content: randomString(t, 3<<20)}})
	proxy, _ := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		if kind == "ranged read" && n > 1 { // the first block (the age header) reads
			return status500
		}
		return pass
	})
	env := append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=1")
	r := backup(t, runOpts{dir: dir, env: env}, "create", "--s3-endpoint", proxy, "--output-dir", s.loc, "--recipient", key.recipient, "app")
	mustExit(t, r, exitFailed)
	if strings.Contains(r.stderr, "the receipt says") || !strings.Contains(r.stderr, "InternalError") {
		t.Errorf("the read-back's GETs failed with 500 InternalError; the run says:\n%s", r.stderr)
	}
}

// TestAttackVerifySniffReadErrorSaysNoIdentity: verify (no --identity) first asks whether the
// archive is encrypted (seal.IsSealed, through archiveRef.sealed), which drops a read error
// and answers "not encrypted"; verify then reads it as a plain archive, whose opening reads
// the magic again, finds age, and fails with "the archive is encrypted, and no identity was
// given to decrypt it" (exit 1). An EIO on the archive's first read is reported as a missing
// key; the I/O error is never named, and without a key verify should have checked the
// ciphertext, not asked for one.
func TestAttackVerifySniffReadErrorSaysNoIdentity(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", filepath.Join(dir, "set"), "--recipient", key.recipient, "app"), exitComplete)
	arch := filepath.Join(dir, "set", readLatest(t, filepath.Join(dir, "set")))
	failed, out, code := withEIO(t, dir, arch, 1, "verify", arch)
	if len(failed) == 0 {
		t.Fatal("no pread64 of the archive was failed")
	}
	if !strings.Contains(out, "input/output error") || code == 0 || strings.Contains(out, "no identity was given") {
		t.Errorf("backup verify (no key): EIO injected at the first pread64 of the encrypted archive:\n%s\nexit %d:\n%s", failed[0], code, lastLines(out, 3))
	}
}

// TestAttackS3CompletionAnswerLostThenResets: the server completes the archive's upload but
// its answer is lost (the connection drops), and the SDK's retries of the completion are
// reset before they reach it, until the attempts run out. Commit then takes the upload for
// failed: it asks the server (HEAD, for the upload's token) only after a refusal or an
// interrupt, not after a transport error. The run says failed, and replaces its receipt with
// a failed one that records no archive, while the archive it uploaded stands complete at its
// name: docs/s3.md promises "an archive the server put at its name is never left there
// without its receipt", and a receipt that says no archive was written does not describe
// it. status shows the run unknown, and prune never deletes an unknown archive: it stays
// for good, billed, beside a run that says it wrote nothing.
func TestAttackS3CompletionAnswerLostThenResets(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	good := readLatest(t, s.dir)
	proxy, count := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		switch {
		case kind == "complete" && n == 1:
			return lostAnswer
		case kind == "complete":
			return reset
		}
		return pass
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "second\n"}})
	r := backup(t, runOpts{dir: dir, env: append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=2")}, "create", "--s3-endpoint", proxy, "--output-dir", s.loc, "app")
	if count("complete") < 2 {
		t.Fatalf("the completion was sent %d times", count("complete"))
	}
	if readLatest(t, s.dir) != good && r.code != exitComplete {
		t.Errorf("exit %d, but LATEST moved", r.code)
	}
	for _, name := range setArchives(t, s.dir) {
		if strings.HasSuffix(name, ".receipt.json") || name == good {
			continue
		}
		// The archive the server completed is in the set.
		rc := readReceipt(t, filepath.Join(s.dir, name+".receipt.json"))
		if rc.Archive == nil || rc.Status == format.Failed && r.code == exitFailed {
			t.Errorf("the server holds the run's archive %s, but the run exited %d and its receipt says %s (archive %+v, error %q):\n%s",
				name, r.code, rc.Status, rc.Archive, rc.Error, r.stderr)
		}
	}
	st := backup(t, runOpts{dir: dir, env: s.env}, "status", s.loc)
	if strings.Contains(st.stdout, "unknown") {
		t.Errorf("status shows an unknown run, which prune keeps for ever:\n%s", st.stdout)
	}
}

// TestAttackS3LatestWriteAnswerLostThenResets: the server moves LATEST, its answer is lost,
// and the SDK's retries of the write are reset in transit until the attempts run out. The
// run then says "LATEST not moved" and exits 1, while LATEST names its archive. Only after a
// refusal (Put's read-back of the object) or an interrupt (movedAnyway) does the run look at
// what the server holds; a transport error is taken for "not written". The run's exit code,
// its line, its metrics (no last success) and the hooks' BACKUP_STATUS all say the backup
// did not become LATEST, and its local copy is dropped.
func TestAttackS3LatestWriteAnswerLostThenResets(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	good := readLatest(t, s.dir)
	var latestPuts atomic.Int64
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/LATEST") {
			return pass
		}
		if latestPuts.Add(1) == 1 {
			return lostAnswer
		}
		return reset
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "second\n"}})
	r := backup(t, runOpts{dir: dir, env: append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=2")}, "create", "--s3-endpoint", proxy, "--output-dir", s.loc, "app")
	now := readLatest(t, s.dir)
	if now == good {
		t.Fatalf("LATEST did not move (the fault did not hit): exit %d\n%s", r.code, r.stderr)
	}
	if r.code != exitComplete || strings.Contains(r.stderr, "LATEST not moved") {
		t.Errorf("LATEST names the run's archive %s, but the run exited %d:\n%s", now, r.code, r.stderr)
	}
}

// TestAttackS3DeadHostsLockWithAClockAhead: docs/s3.md: "A lock past its expiry (5 minutes
// after its last renewal: its holder died) is taken over". The expiry is read from the lock
// object, as its writer's clock put it; the server's own record of the last renewal (the
// object's Last-Modified) is not looked at. A host whose clock ran a day ahead (a VM resumed
// with a wrong RTC, an NTP step) and that then died leaves a lock that was last renewed an
// hour ago by the server's clock and still "expires" tomorrow: every other host's run exits
// 4 until then, and --wait waits out the day.
func TestAttackS3DeadHostsLockWithAClockAhead(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	// The dead host's last renewal, by its clock a day ahead of the server's.
	ahead := time.Now().UTC().Add(24 * time.Hour)
	data, err := json.Marshal(map[string]any{"host": "web2.example", "pid": 4242, "started": ahead.Add(-time.Hour), "expires": ahead.Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName),
		Body: strings.NewReader(string(data))}); err != nil {
		t.Fatal(err)
	}
	// An hour has passed since, by the server's clock (the posix backend's Last-Modified is
	// the file's mtime).
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.dir, backupset.LockName), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	head, err := s3Client(s.srv).HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName)})
	if err != nil || time.Since(aws.ToTime(head.LastModified)) < 55*time.Minute {
		t.Fatalf("the lock object's Last-Modified: %v, %v", head.LastModified, err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "--wait", "3s", "app")
	if r.code != exitComplete {
		t.Errorf("the lock was last renewed an hour ago by the server's clock (its lease is 5 minutes), but create exits %d:\n%s", r.code, r.stderr)
	}
}

// TestAttackS3LiveHostsLockWithAClockBehind: the other side of the same rule. A host whose
// clock runs ten minutes behind writes leases that "expire" five minutes before the server's
// now: its lock, renewed a moment ago (the server's Last-Modified says so), is taken over at
// once by any other host's run ("whose lease had expired"), which then aborts the live run's
// upload as one a killed run left (Clean) and writes the set beside it: the two hosts
// trample each other, which the lock exists to prevent ("two hosts writing one set cannot
// both win").
func TestAttackS3LiveHostsLockWithAClockBehind(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	// web2's run took the lock just now, by its clock ten minutes behind.
	behind := time.Now().UTC().Add(-10 * time.Minute)
	data, err := json.Marshal(map[string]any{"host": "web2.example", "pid": 4242, "started": behind, "expires": behind.Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	bucket, prefix, _ := s3store.ParseLocation(s.loc)
	if _, err := s3Client(s.srv).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + backupset.LockName),
		Body: strings.NewReader(string(data))}); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app")
	if r.code != exitLocked {
		t.Errorf("the lock was written a moment ago by the server's clock, but create exits %d (want 4):\n%s", r.code, r.stderr)
	}
}

// TestAttackS3PruneInterruptedAfterDelete: the server deletes the archive prune asked it to
// (If-Match on the ETag judged), but its answer has not come back when SIGINT cancels the
// request. README: prune's exit 130 is "interrupted (what was deleted or moved before is
// listed)". prune takes the cancelled delete for not made and lists nothing: it says
// "pruned 0" (--json "deleted": 0) while the backup's archive is gone from the set (its
// receipt left alone, a run status shows as gone). A bucket's write cancelled by an
// interrupt is looked up afterwards for LATEST (movedAnyway) and the archive's completion,
// not for a delete.
func TestAttackS3PruneInterruptedAfterDelete(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	for i := range 2 {
		makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: fmt.Sprintf("run %d\n", i)}})
		mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "-q", "--output-dir", s.loc, "app"), exitComplete)
	}
	oldest := setArchives(t, s.dir)[0]
	var deleted atomic.Bool
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		if kind == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/"+oldest) {
			deleted.Store(true)
			return holdAnswer
		}
		return pass
	})
	cmd := exec.Command(binary, "prune", "--json", "--s3-endpoint", proxy, "--keep-last", "1", s.loc)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), s.env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the server to delete the archive", func() bool {
		_, err := os.Stat(filepath.Join(s.dir, oldest))
		return deleted.Load() && errors.Is(err, fs.ErrNotExist)
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var out struct {
		Deleted int `json:"deleted"`
	}
	json.Unmarshal([]byte(stdout.String()), &out)
	if out.Deleted != 1 {
		t.Errorf("the server deleted %s, but prune (exit %d) lists %d deleted:\n%s%s", oldest, cmd.ProcessState.ExitCode(), out.Deleted, stdout.String(), stderr.String())
	}
}

// TestAttackS3ReceiptReplaceAnswerLostThenResets: after the read-back, the run replaces its
// "not verified" receipt with its complete one (If-Match), before LATEST moves. The server
// makes the write, the answer is lost, and the retries are reset in transit. The run then
// says failed ("read back, but its receipt could not be written"), exits 1 and leaves
// LATEST, while the bucket's receipt of its archive says complete: the receipt and the
// run's exit code, summary and metrics disagree. Put looks at what the server holds only
// after a refusal (412), not after a transport error.
func TestAttackS3ReceiptReplaceAnswerLostThenResets(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "first\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)
	var replaces atomic.Int64
	proxy, _ := startRequestFaultProxy(t, s.srv.Endpoint, func(r *http.Request, kind string, n int) fault {
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, ".receipt.json") || r.Header.Get("If-Match") == "" {
			return pass
		}
		if replaces.Add(1) == 1 {
			return lostAnswer
		}
		return reset
	})
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "second\n"}})
	prom := filepath.Join(dir, "run.prom")
	r := backup(t, runOpts{dir: dir, env: append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=2")}, "create", "--metrics-file", prom, "--s3-endpoint", proxy, "--output-dir", s.loc, "app")
	if replaces.Load() == 0 {
		t.Fatal("no receipt was replaced")
	}
	runs := setArchives(t, s.dir)
	newest := ""
	for _, n := range runs {
		if !strings.HasSuffix(n, ".receipt.json") {
			newest = n
		}
	}
	rc := readReceipt(t, filepath.Join(s.dir, newest+".receipt.json"))
	if (rc.Status == format.Complete) != (r.code == exitComplete) {
		t.Errorf("the bucket's receipt of %s says %s, but the run exited %d (metrics: exit %v):\n%s", newest, rc.Status, r.code, exitMetric(t, prom), r.stderr)
	}
}

// TestAttackStatusJSONSilentWhenUnreadable: status is what monitoring calls, and its --json
// "prints the same as an object (dir, latest, healthy, reason, runs)" (docs/sets.md); verify
// --json and prune --json print their object, with the error, on every outcome. A set whose
// bucket cannot be reached gets nothing at all on stdout from status --json (nor from sets
// --json): a wrapper that reads .healthy reads an empty document instead of false.
func TestAttackStatusJSONSilentWhenUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append((&s3test.Server{Endpoint: "http://127.0.0.1:9"}).Env(), "AWS_MAX_ATTEMPTS=1")
	// (sets --json prints an array of the sets it found: none is printed when it cannot list
	// them, which an empty array would misstate.)
	for _, args := range [][]string{{"status", "--json", "s3://bucket/hosts/web1"}} {
		r := backup(t, runOpts{dir: dir, env: env}, args...)
		if r.code != exitFailed {
			t.Errorf("%v, server unreachable: exit %d", args, r.code)
		}
		if !json.Valid([]byte(r.stdout)) {
			t.Errorf("%v, server unreachable: stdout %q is no JSON document (stderr %q)", args, r.stdout, r.stderr)
		}
	}
}

// TestAttackKeyFilesOfAnotherUser: docs/encryption.md warns of a recipients file "that group
// or others may write … since whoever adds a key there reads every backup made after", and of
// an identity file others can read. Only the mode's group and other bits are looked at: a
// recipients file (mode 0644) that belongs to another user (the web app's, which the root
// cron job was pointed at) can be written by that user, who adds a key of their own and reads
// every backup after, with no warning; nor is a warning given for an identity file (0600)
// that another user owns and so reads. ssh refuses both (StrictModes); the rule's own words
// ("whoever can write it") cover the owner.
func TestAttackKeyFilesOfAnotherUser(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "x"}})
	file := filepath.Join(dir, "recipients")
	if err := os.WriteFile(file, []byte(key.recipient+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	if err := os.Chown(file, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(dir, "a.zip.age")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--recipients-file", file, "-o", arch, "app")
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "warning: recipients file") {
		t.Errorf("a recipients file owned by uid %d (who may add a recipient) was used without a word: stderr %q", nobody, r.stderr)
	}
	if err := os.Chown(key.identity, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	r = backup(t, runOpts{dir: dir}, "list", "-i", key.identity, arch)
	mustExit(t, r, exitComplete)
	if !strings.Contains(r.stderr, "warning: identity file") {
		t.Errorf("an identity file owned by uid %d (who reads it) was used without a word: stderr %q", nobody, r.stderr)
	}
}

// TestAttackS3SealedSourceCheckSkippedOnReadError: docs/encryption.md: "with -i it reads the
// source from LATEST's central directory and refuses, exit 1, as for a plain set" a run of
// another source into an encrypted set. The check (sealedSource) answers "cannot tell" for
// every error, not only for "no key opens it": one ranged read of LATEST's archive that the
// server fails (500) is enough for a run holding the key to write another source's backup
// into the set, move LATEST to it, and with --keep-last 1 prune the set's backups of its own
// source. A read that failed is not a key that is missing; the
// check must fail closed ("It never falls back").
func TestAttackS3SealedSourceCheckSkippedOnReadError(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "app\n"}})
	makeTree(t, filepath.Join(dir, "other"), map[string]node{"b.txt": {content: "other\n"}})
	create := func(env []string, extra ...string) result {
		args := append([]string{"create", "--no-cache", "--output-dir", s.loc, "--recipient", key.recipient, "-i", key.identity}, extra...)
		return backup(t, runOpts{dir: dir, env: env}, args...)
	}
	mustExit(t, create(s.env, "app"), exitComplete)
	good := readLatest(t, s.dir)
	if r := create(s.env, "other"); r.code != exitFailed || !strings.Contains(r.stderr, "is the backup set of") {
		t.Fatalf("another source with the key: exit %d, %q; want 1, refused", r.code, r.stderr)
	}
	proxy, _ := startFaultProxy(t, s.srv.Endpoint, func(kind string, n int) fault {
		if kind == "ranged read" && n == 1 {
			return status500
		}
		return pass
	})
	env := append(slices.Clone(s.env), "AWS_MAX_ATTEMPTS=1")
	r := create(env, "--s3-endpoint", proxy, "--keep-last", "1", "other")
	if r.code != exitFailed || readLatest(t, s.dir) != good {
		t.Errorf("another source, the first read of LATEST's archive failing once: exit %d, LATEST %s (was %s):\n%s", r.code, readLatest(t, s.dir), good, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(s.dir, good)); err != nil {
		t.Errorf("the set's only backup of app, %s, is gone (pruned by the other source's run): %v", good, err)
	}
}

// TestAttackForcedOutputOverAnAgeFileInSource: an output inside a SOURCE may replace only
// what an earlier run wrote there ("a file inside SOURCE … that is not a backup archive" is
// refused, exit 2, --force or not). For a name ending .zip.age, "a backup archive" is any
// file that starts with age's magic: the user's own age-encrypted file inside the source is
// taken for the run's earlier output. With --force the run leaves it out of the backup (an
// excluded output of its own, rule self) and replaces it: the file is in neither the backup
// nor the folder.
func TestAttackForcedOutputOverAnAgeFileInSource(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "docs"), map[string]node{"tax.txt": {content: "tax\n"}})
	precious := filepath.Join(dir, "docs", "precious.zip.age")
	r, err := age.ParseX25519Recipient(key.recipient)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(precious)
	if err != nil {
		t.Fatal(err)
	}
	w, err := age.Encrypt(f, r)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "the user's own secret, not a backup\n")
	w.Close()
	f.Close()
	before, _ := os.ReadFile(precious)

	res := backup(t, runOpts{dir: dir}, "create", "--force", "-o", precious, "--recipient", key.recipient, "docs")
	after, _ := os.ReadFile(precious)
	if res.code != exitUsage || !bytes.Equal(before, after) {
		t.Errorf("-o over the user's age file inside SOURCE, --force: exit %d (want 2, as for any file that is not a backup archive), the file replaced: %v\n%s",
			res.code, !bytes.Equal(before, after), res.stderr)
	}
}

// TestAttackS3LiveLockReadAsGarbageTakenOver: a lock object whose body does not parse is
// "not a lease at all (a damaged lock object): take it over" at once (s3store/lock.go),
// whoever holds it and however recently it was written. A server (or a proxy, a cache in
// front of it) that answers a GET of the lock with other bytes than the object holds (here:
// its first 8) under the object's own ETag makes a second run take over the lock of a run
// that is alive and working: the replace on that ETag succeeds, and two runs hold the set.
// Only a lease that cannot be read at all may be judged by the server's record (its
// Last-Modified), never taken for free.
func TestAttackS3LiveLockReadAsGarbageTakenOver(t *testing.T) {
	t.Parallel()
	r := secondRunBesideLiveLock(t, false)
	if r.code != exitLocked {
		t.Errorf("a second run while the first holds the set: exit %d (want 4):\n%s", r.code, r.stderr)
	}
}

// TestAttackS3LiveLockGarbageNoDateTakenOver: TestAttackS3LiveLockReadAsGarbageTakenOver
// behind a proxy that also sends no Date header (a server or cache that leaves it out): the
// lock's age cannot be told by the server's clock, and a lease that does not parse is then
// taken over at once again, beside the live first run.
func TestAttackS3LiveLockGarbageNoDateTakenOver(t *testing.T) {
	t.Parallel()
	r := secondRunBesideLiveLock(t, true)
	if r.code != exitLocked {
		t.Errorf("a second run while the first holds the set (server sends no Date): exit %d (want 4):\n%s", r.code, r.stderr)
	}
}

// secondRunBesideLiveLock starts a run of a bucket set that holds its lock while its before
// hook works, and returns a second run made through a proxy that answers a GET of the lock
// with its first 8 bytes under the object's own ETag, and no checksum (most S3-compatible
// servers keep none); with noDate the proxy also sends no Date header.
func secondRunBesideLiveLock(t *testing.T, noDate bool) result {
	t.Helper()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	mustExit(t, backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", s.loc, "app"), exitComplete)

	first := exec.Command(binary, "create", "--output-dir", s.loc, "--exec-before", "sleep 4", "app")
	first.Dir, first.Env = dir, append(os.Environ(), s.env...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	waitFor(t, "the first run to take the lock", func() bool {
		_, err := os.Stat(filepath.Join(s.dir, backupset.LockName))
		return err == nil
	})

	u, _ := url.Parse(s.srv.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(resp *http.Response) error {
		if noDate {
			resp.Header.Del("Date")
		}
		if resp.Request.Method != http.MethodGet || !strings.HasSuffix(resp.Request.URL.Path, "/"+backupset.LockName) || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = body[:min(8, len(body))]
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
		for k := range resp.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
				resp.Header.Del(k)
			}
		}
		return nil
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if noDate {
			w.Header()["Date"] = nil // no Date of the proxy's own either
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return backup(t, runOpts{dir: dir, env: s.env}, "create", "--s3-endpoint", proxy.URL, "--output-dir", s.loc, "app")
}
