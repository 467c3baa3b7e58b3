package restore

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"backup/archive"
)

// Entries are independent, so Run restores them with Options.Jobs workers, each with a
// folder chain of its own (destTree.fork) checked before each use as a single restore's is,
// and a buffer and a Result of its own. What they share is guarded: the folders this
// restore opened and made (destShared), the journal, and the plan's records of what Run did
// (Plan.mu). What they report is put back in archive order when they are done, so that the
// result, the lines printed and the hard-link groups are the same whatever Jobs is; only
// which entries are in place when a fatal error or an interrupt stops the run may differ,
// and the counts always say exactly what is in place.

// workResult is what one worker did: its part of the Result, and the fatal error (or ctx's)
// that stopped it, at the position of its entry.
type workResult struct {
	res      Result
	err      error
	errIndex int
}

// restoreAll restores every entry of the plan into res, with the plan's Jobs workers.
func (p *Plan) restoreAll(ctx context.Context, t *destTree, res *Result) error {
	p.stopped = make(chan struct{})
	jobs := p.fdJobs(min(cmp.Or(p.opts.Jobs, runtime.NumCPU()), max(len(p.entries), 1)))
	if jobs <= 1 {
		part, err := p.work(ctx, t, p.entries, nil)
		p.merge(res, []*workResult{part}, len(p.warnings))
		return err
	}
	warnings := len(p.warnings)
	// A few runs per worker wait in next, so that a worker coming free takes one at once
	// rather than waiting for the dispatcher to be scheduled.
	next := make(chan run, handPerJob*jobs)
	parts := make([]*workResult, jobs)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wt := t.fork()
			defer wt.release()
			parts[w], _ = p.work(ctx, wt, p.entries, next)
		}()
	}
	stop := ctx.Done()
	cut := false // ctx stopped the dispatch: entries were never handed to a worker
dispatch:
	for _, r := range p.runs(p.entries) {
		select {
		case next <- r:
		case <-stop:
			cut = true
			break dispatch
		case <-p.stopped:
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	err := p.merge(res, parts, warnings)
	if err == nil && cut {
		// No worker met the cancelled context (none was handed an entry after it): the
		// entries left undispatched are not restored, and the run is interrupted.
		err = ctx.Err()
	}
	return err
}

// fdJobs caps jobs so that what the workers keep open fits in half the limit on open files
// (the other half is left to the archive, the journal and the rest of the process): each
// keeps the folders of the path it wrote last, as deep as the deepest entry up to
// openChain and two more, and a few more while it writes (the temp file and its second
// descriptor, what --force replaces, a link's source). Without
// the cap an archive of deep trees failed entry after entry with "too many open files"
// where one worker restores it all. Never fewer than one: one worker is what restore was.
func (p *Plan) fdJobs(jobs int) int {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return jobs
	}
	depth := 0
	for _, e := range p.entries {
		depth = max(depth, strings.Count(e.Name, "/")+1)
	}
	perWorker := uint64(min(depth, openChain()+2) + 4)
	return max(1, min(jobs, int(min(lim.Cur/2/perWorker, uint64(jobs)))))
}

// work restores entries: all of them in order when next is nil, else the runs of them
// whose bounds next hands out, until one stops the run. A run is of neighbours in the
// archive (archive.NextSpan), read with one read when the first of them is.
func (p *Plan) work(ctx context.Context, t *destTree, entries []*archive.Entry, next <-chan run) (*workResult, error) {
	part := &workResult{errIndex: -1}
	buf := make([]byte, bufSize)
	var span archive.Span
	one := func(i int) bool {
		err := ctx.Err()
		if err == nil {
			err = p.restoreEntry(ctx, t, entries[i], &part.res, buf, &span)
		}
		if err != nil {
			part.err, part.errIndex = err, i
			p.stop()
		}
		return err == nil
	}
	each := func(r run, stopped func() bool) bool {
		span.Set(entries[r.from:r.to])
		for i := r.from; i < r.to; i++ {
			if stopped() || !one(i) {
				return false
			}
		}
		return true
	}
	if next == nil {
		for _, r := range p.runs(entries) {
			if !each(r, func() bool { return false }) {
				break
			}
		}
		return part, part.err
	}
	for r := range next {
		if !each(r, p.isStopped) {
			break
		}
	}
	for range next { // the dispatcher stops at p.stopped; what waited in next is dropped
	}
	return part, part.err
}

// run is the indexes [from, to) of neighbouring entries.
type run struct{ from, to int }

// runs cuts entries into runs of neighbours. A file DEST holds already is kept, not read:
// it is a run of its own, so that no neighbour's span reads its data.
func (p *Plan) runs(entries []*archive.Entry) []run {
	kept := func(e *archive.Entry) bool {
		_, ok := p.present[e.Name]
		return ok && !e.IsDir
	}
	var rs []run
	for i := 0; i < len(entries); {
		end := i + 1
		if !kept(entries[i]) {
			end = archive.NextSpan(entries, i)
			if k := slices.IndexFunc(entries[i+1:end], kept); k >= 0 {
				end = i + 1 + k
			}
		}
		rs = append(rs, run{i, end})
		i = end
	}
	return rs
}

// handPerJob is how many runs per worker wait to be taken.
const handPerJob = 4

// stop tells the dispatcher and the workers that a worker met an error that stops the run.
func (p *Plan) stop() {
	p.stopOnce.Do(func() { close(p.stopped) })
}

// isStopped says whether a worker met an error that stops the run: no entry is begun after.
func (p *Plan) isStopped() bool {
	select {
	case <-p.stopped:
		return true
	default:
		return false
	}
}

// merge adds the workers' parts to res, their lists (and the plan's warnings from the
// warnings-th on) in archive order, and returns the error of the earliest entry that
// stopped the run.
func (p *Plan) merge(res *Result, parts []*workResult, warnings int) error {
	damaged, failed := len(res.Damaged), len(res.Failed)
	var err error
	errIndex := -1
	for _, w := range parts {
		if w == nil {
			continue
		}
		r := &w.res
		res.Files, res.Dirs, res.Symlinks, res.Bytes = res.Files+r.Files, res.Dirs+r.Dirs, res.Symlinks+r.Symlinks, res.Bytes+r.Bytes
		res.Present += r.Present
		res.Damaged = append(res.Damaged, r.Damaged...)
		res.Failed = append(res.Failed, r.Failed...)
		if w.err != nil && (errIndex < 0 || w.errIndex < errIndex) {
			err, errIndex = w.err, w.errIndex
		}
	}
	if len(parts) > 1 { // one worker's lists are in archive order already
		p.inOrder(res.Damaged[damaged:])
		p.inOrder(res.Failed[failed:])
		p.inOrder(p.warnings[warnings:])
		for _, names := range p.linked {
			slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(p.position(a), p.position(b)) })
		}
	}
	return err
}

// inOrder sorts problems of Run's entries into archive order.
func (p *Plan) inOrder(problems []archive.Problem) {
	slices.SortStableFunc(problems, func(a, b archive.Problem) int {
		return cmp.Compare(p.position(a.Entry), p.position(b.Entry))
	})
}

// position is the place in archive order of the entry name (as named or as stored). The
// index of every name is made at the first call: a restore with nothing to sort (no
// problem, no hard link) never pays for it, which was about 1% of a restore's CPU.
func (p *Plan) position(name string) int {
	if p.pos == nil {
		p.pos = make(map[string]int, 2*len(p.entries))
		for i, e := range p.entries {
			p.pos[e.Name], p.pos[e.StoredName()] = i, i
		}
	}
	return p.pos[name]
}

// mark notes that Run wrote into the folder dir (its mtime changed).
func (p *Plan) mark(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.touched[dir] = true
}

// place notes the identity of the file Run put in place (or kept) for e when e is a member
// of a hard-link group, for relink, and reports whether it is. Nothing else reads it: a map
// of every file restored cost a restore of the bench corpus about 2% of its CPU.
func (p *Plan) place(e *archive.Entry, id nodeID) bool {
	if p.linkGroup(e) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.placed[e.Name] = id
	return true
}
