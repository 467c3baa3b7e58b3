package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"backup/backupset/s3store/s3test"
)

// verdict is what the checks found: each failure is one line.
type verdict struct {
	failures []string
	notes    []string // counts worth reporting
}

func (v *verdict) fail(format string, args ...any) {
	v.failures = append(v.failures, fmt.Sprintf(format, args...))
}
func (v *verdict) note(format string, args ...any) {
	v.notes = append(v.notes, fmt.Sprintf(format, args...))
}

// check runs the final sets and verifies, then checks everything the issue lists.
func (s *sim) check(ctx context.Context) *verdict {
	v := &verdict{}
	s.checkRuns(v)
	s.checkStale(ctx, v)
	s.checkVerify(ctx, v)
	time.Sleep(500 * time.Millisecond) // the server logs a request once it has answered it
	log, err := s3test.ReadAccessLog(s.srv.accessLog)
	if err != nil {
		v.fail("reading the access log: %v", err)
		return v
	}
	s.checkOwnership(v, log)
	s.checkUploads(ctx, v, log)
	s.checkTakeovers(v)
	return v
}

// checkRuns: every run not killed completed, every run marked was killed mid-upload, and
// the monitor's sets and the prunes never failed to do their work.
func (s *sim) checkRuns(v *verdict) {
	killed := 0
	for _, r := range s.creates {
		switch {
		case r.kill && !r.killed:
			v.fail("%s was to be killed mid-upload but ended first: %s", r.agent, r.summary())
		case r.killed:
			killed++
		case r.code != 0:
			v.fail("run %s", r.summary())
		}
	}
	for _, r := range s.others {
		monitor := strings.HasPrefix(r.agent, "monitor-")
		// A prune of a set whose only runs were killed refuses, as it must: no LATEST.
		refused := r.code == 1 && strings.Contains(r.stderr, "not pruning: ") && strings.Contains(r.stderr, "LATEST: is missing")
		if monitor && r.code > 1 || !monitor && r.code != 0 && !refused {
			v.fail("%s", r.summary())
		}
		if monitor && strings.Contains(r.stderr, "cannot") {
			v.fail("the monitor could not read: %s", r.summary())
		}
	}
	v.note("%d runs, %d killed mid-upload, %d prunes and sets beside them", len(s.creates), killed, len(s.others))
}

// lastKilled are the hosts whose last run was killed, and for each whether an earlier run
// of it completed.
func (s *sim) lastKilled() map[string]bool {
	byHost := map[string][]*run{}
	for _, r := range s.creates {
		byHost[r.host.name] = append(byHost[r.host.name], r)
	}
	out := map[string]bool{}
	for name, runs := range byHost {
		slices.SortFunc(runs, func(a, b *run) int { return a.round - b.round })
		if last := runs[len(runs)-1]; last.killed {
			out[name] = slices.ContainsFunc(runs, func(r *run) bool { return !r.killed && r.code == 0 })
		}
	}
	return out
}

// checkStale runs sets with a --max-age that the last round's backups meet and the earlier
// rounds' do not: exactly the hosts whose last run was killed are unhealthy, stale (or
// missing, when none of their runs completed).
func (s *sim) checkStale(ctx context.Context, v *verdict) {
	last := s.roundStart[len(s.roundStart)-1].Truncate(time.Second)
	maxAge := time.Since(last) + 500*time.Millisecond
	r := &run{agent: "monitor-final"}
	if err := r.exec(ctx, s.srv, s.cfg.bin, "sets", "--json", "--max-age", maxAge.Round(time.Millisecond).String(), "s3://"+bucket+"/hosts"); err != nil {
		v.fail("sets: %v", err)
		return
	}
	var sets []struct {
		Set    string `json:"set"`
		Health string `json:"health"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sets); err != nil {
		v.fail("sets --json: %v: %s", err, r.summary())
		return
	}
	if len(sets) != len(s.hosts) {
		v.fail("sets found %d sets, want %d", len(sets), len(s.hosts))
	}
	want := s.lastKilled()
	for _, set := range sets {
		name := set.Set[strings.LastIndex(set.Set, "/")+1:]
		completed, killed := want[name]
		health := map[bool]string{true: "stale", false: "missing"}[completed]
		switch {
		case killed && set.Health != health:
			v.fail("%s: its last run was killed, sets says %s, want %s", set.Set, set.Health, health)
		case !killed && set.Health != "ok":
			v.fail("%s: sets says %s, want ok", set.Set, set.Health)
		}
	}
	v.note("sets --max-age %v: %d of %d sets unhealthy, each one whose last run was killed", maxAge.Round(time.Millisecond), len(want), len(sets))
}

// checkVerify verifies every set's LATEST (a set whose every run was killed has none).
func (s *sim) checkVerify(ctx context.Context, v *verdict) {
	noLatest := s.lastKilled()
	var mu sync.Mutex
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, h := range s.hosts {
		if done, ok := noLatest[h.name]; ok && !done {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := &run{host: h, agent: h.name + "-verify"}
			err := r.exec(ctx, s.srv, s.cfg.bin, "verify", h.set())
			mu.Lock()
			defer mu.Unlock()
			if err != nil || r.code != 0 {
				v.fail("verify %s: %v %s", h.set(), err, r.summary())
			}
		})
	}
	wg.Wait()
}

// hostOf is the host an agent runs for ("h001-r2" → "h001"); "" for the monitor.
func hostOf(agent string) string {
	if !strings.HasPrefix(agent, "h") {
		return ""
	}
	name, _, _ := strings.Cut(agent, "-")
	return name
}

// checkOwnership: from the server's access log, no request of a host's processes reached a
// key outside its set or listed beyond it, and the monitor only read.
func (s *sim) checkOwnership(v *verdict, log []s3test.Access) {
	owns := map[string]string{}
	counted := 0
	for _, a := range log {
		if h := hostOf(a.Agent); h != "" {
			owns[a.Agent] = "hosts/" + h + "/"
			counted++
		}
		if strings.HasPrefix(a.Agent, "monitor-") && !slices.Contains([]string{"ListObjectsV2", "GetObject", "HeadObject"}, a.Op) {
			v.fail("the monitor's sets made a %s of %q", a.Op, a.Key)
		}
	}
	if counted == 0 {
		v.fail("the access log names no host's request: is the agent recorded?")
	}
	for _, a := range s3test.Foreign(log, owns) {
		v.fail("%s reached beyond its set: %s %q %v", a.Agent, a.Op, a.Key, a.Query)
	}
	v.note("access log: %d requests, %d by the hosts' processes, none beyond its own set", len(log), counted)
}

// checkUploads: every killed run's upload was aborted by its host's next run; those of runs
// killed in the last round are still open (no run of the set came after), and nothing else.
func (s *sim) checkUploads(ctx context.Context, v *verdict, log []s3test.Access) {
	uploadOf := map[string]string{} // agent -> the upload id its parts went to
	abortedBy := map[string]string{}
	for _, a := range log {
		id := a.Query.Get("uploadId")
		switch {
		case a.Op == "UploadPart" && id != "":
			uploadOf[a.Agent] = id
		case a.Op == "AbortMultipartUpload" && id != "":
			abortedBy[id] = a.Agent
		}
	}
	open, err := s.openUploads(ctx)
	if err != nil {
		v.fail("listing the uploads left: %v", err)
		return
	}
	cleaned := 0
	for _, r := range s.creates {
		if !r.killed {
			continue
		}
		id := uploadOf[r.agent]
		next := fmt.Sprintf("%s-r%d", r.host.name, r.round+1)
		switch {
		case id == "":
			v.fail("%s was killed mid-upload, but the log shows no part of it", r.agent)
		case r.round < s.cfg.rounds && abortedBy[id] != next:
			v.fail("the upload of %s (killed) was aborted by %q, want its set's next run %s", r.agent, abortedBy[id], next)
		case r.round < s.cfg.rounds:
			cleaned++
		case !open[id]:
			v.fail("the upload of %s (killed in the last round) is gone: aborted by %q", r.agent, abortedBy[id])
		}
		delete(open, id)
	}
	for id := range open {
		v.fail("upload %s is left open, and no killed run made it", id)
	}
	v.note("abandoned uploads: %d aborted by their own set's next run", cleaned)
}

// took is the line a run prints when it takes a dead run's lock over.
var took = regexp.MustCompile(`took over the lock of pid (\d+) on `)

// checkTakeovers: a run or prune that took a lock over took it from a killed run of its own
// host, never from a live one.
func (s *sim) checkTakeovers(v *verdict) {
	killedPids := map[string]map[int]bool{}
	for _, r := range s.creates {
		if r.killed {
			if killedPids[r.host.name] == nil {
				killedPids[r.host.name] = map[int]bool{}
			}
			killedPids[r.host.name][r.pid] = true
		}
	}
	n := 0
	for _, r := range append(slices.Clone(s.creates), s.others...) {
		for _, m := range took.FindAllStringSubmatch(r.stderr, -1) {
			pid, _ := strconv.Atoi(m[1])
			n++
			if h := hostOf(r.agent); !killedPids[h][pid] {
				v.fail("%s took over the lock of pid %d, which was not a killed run of %s", r.agent, pid, h)
			}
		}
	}
	v.note("lock takeovers: %d, each of a killed run's lock", n)
}

// openUploads lists the multipart uploads left in the bucket, asking the server directly.
func (s *sim) openUploads(ctx context.Context) (map[string]bool, error) {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(s3test.AccessKey, s3test.SecretKey, "")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(s.srv.endpoint), true
	})
	open := map[string]bool{}
	p := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range page.Uploads {
			open[aws.ToString(u.UploadId)] = true
		}
	}
	return open, nil
}
