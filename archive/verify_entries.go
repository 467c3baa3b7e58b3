package archive

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"backup/skiprules"
)

// The entries are checked by a fixed pool of workers, since inflating and hashing are the
// cost and the archive is a ReaderAt that every worker can read at its own offset. The
// manifest is compared in archive order by the one goroutine that hands out the entries;
// what the workers find is put back in archive order at the end, so that the result does
// not depend on how many workers there were or how they were scheduled.

// entryJob is one entry for a worker: its index in archive order and the SHA-256 (hex) its
// data must have, "" when there is nothing to compare with.
type entryJob struct {
	index   int
	entry   *Entry
	wantSum string
	copied  bool // copied from the run's reference (see ReadBack): only its headers are checked
	// manifest marks the manifest entry, which ReadBack checks against the SHA-256 of the
	// bytes written; it is no file of the archive's.
	manifest bool
	// late is set for an entry sent ahead of its turn (verify_early.go): wantSum is not
	// known yet, and the SHA-256 found is compared at the end.
	late *lateWant
}

// foundProblem is a problem with the entry at index, tagged so that problems can be sorted
// into the order a sequential read finds them: the manifest's record (step 0) before the
// entry's data (step 1).
type foundProblem struct {
	index, step int
	Problem
}

// workerResult is what one worker found; each worker owns its own, so none is shared.
type workerResult struct {
	found []foundProblem
	bytes int64
	late  []lateSum
}

func (r *Reader) verifyEntries(ctx context.Context, res *VerifyResult, jobs int, oneByOne bool, progress *VerifyProgress) error {
	jobs = max(1, min(jobs, len(r.Entries)))
	cov := r.coverageItems()
	return checkAll(ctx, res, jobs, oneByOne, progress, cov, func(work *batcher) []foundProblem {
		return r.dispatch(res, work, jobs)
	}, func() []foundProblem { return r.coverage(cov) })
}

// checkAll runs jobs workers on the entries dispatch hands out, and adds what it and they
// found to res, in archive order. dispatch closes work when it is done. With oneByOne,
// each entry goes alone and nothing is read ahead. The workers note where each entry they
// check whose headers read ends in cov (see coverage.go), when it is not nil: cov[i].end for
// the entry of index i, written by the one worker that checks it. cover, when set, is
// called once they are done, and adds what it finds.
func checkAll(ctx context.Context, res *VerifyResult, jobs int, oneByOne bool, progress *VerifyProgress, cov []coverageItem,
	dispatch func(work *batcher) []foundProblem, cover func() []foundProblem) error {
	// A small buffer lets the workers take the next batch without waiting for this
	// goroutine to be scheduled; memory stays bounded by batchMax.
	work := make(chan batch, 2*jobs)
	results := make([]workerResult, jobs)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = checkEntries(ctx, work, progress, cov) })
	}
	found := dispatch(&batcher{ctx: ctx, work: work, oneByOne: oneByOne})
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, w := range results {
		found = append(found, w.found...)
		res.Bytes += w.bytes
	}
	if cover != nil {
		found = append(found, cover()...)
	}
	found = compareLate(res, results, found)
	slices.SortStableFunc(found, func(a, b foundProblem) int {
		return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.step, b.step))
	})
	for _, p := range found {
		res.Problems = append(res.Problems, p.Problem)
	}
	return nil
}

// dispatch counts the entries and compares them with the manifest in archive order, hands
// each to the workers and closes work when all are handed out or ctx is done. It returns
// the problems the comparison found, those missing from the archive last.
func (r *Reader) dispatch(res *VerifyResult, work *batcher, jobs int) []foundProblem {
	defer work.close()
	early, ok := r.sendEarly(work, jobs)
	if !ok {
		return nil
	}
	var found []foundProblem
	var x *manifestIndex
	if r.Manifest != nil {
		x = newManifestIndex(r.Manifest)
	}
	for i, e := range r.Entries {
		res.count(e)
		job := entryJob{index: i, entry: e}
		if x != nil {
			var p *Problem
			job.wantSum, p = x.compare(e)
			if p != nil {
				found = append(found, foundProblem{index: i, Problem: *p})
			}
		}
		if r.Manifest != nil && e.IsDir && e.hdr.afterManifest() {
			found = append(found, foundProblem{index: i, Problem: Problem{Entry: e.StoredName(), Reason: errAfterManifest.Error()}})
		}
		if late := early[i]; late != nil {
			late.want = job.wantSum // sent already
			continue
		}
		if !work.add(job) {
			return nil
		}
	}
	if x != nil {
		for _, p := range x.missing() {
			// After every entry's problems, as a sequential read finds them.
			found = append(found, foundProblem{index: len(r.Entries), Problem: p})
		}
	}
	return found
}

// checkEntries is one worker: it reads the batches it is handed, each entry in turn through
// a buffer of its own, until work is closed. Once ctx is done it reads nothing more and
// returns as soon as work is closed. It counts each entry checked in progress.
func checkEntries(ctx context.Context, work <-chan batch, progress *VerifyProgress, cov []coverageItem) workerResult {
	var w workerResult
	buf := make([]byte, copyBufSize)
	var ahead readAhead
	for b := range work {
		ra := ahead.load(ctx, b)
		for _, job := range b.jobs {
			w.check(ctx, job, ra, buf, progress, cov)
		}
	}
	return w
}

// check checks the entry of job, reading it through ra, unless ctx is done.
func (w *workerResult) check(ctx context.Context, job entryJob, ra io.ReaderAt, buf []byte, progress *VerifyProgress, cov []coverageItem) {
	if ctx.Err() != nil {
		return
	}
	e := job.entry
	loc := localRef{ra: ra, off: e.local.off}
	got, err := Checked{Size: e.Size}, error(nil)
	var span localSpan
	if job.copied {
		span, err = dataAt(e.file(), loc)
	} else {
		got, span, err = copyCheckedSpan(ctxDiscard{ctx}, e.file(), loc, job.wantSum, buf)
	}
	if span.end > 0 && cov != nil && !job.manifest {
		cov[job.index].end = span.end
	}
	switch {
	case ctx.Err() != nil:
		// Interrupted, not damaged: the caller returns ctx's error.
	case err != nil:
		w.found = append(w.found, foundProblem{index: job.index, step: 1,
			Problem: Problem{Entry: e.StoredName(), Reason: err.Error()}})
	case job.late != nil:
		w.late = append(w.late, lateSum{index: job.index, name: e.StoredName(), got: got.SHA256, bytes: got.Size, want: job.late})
	case !e.IsDir && e.Kind == "" && !job.manifest:
		w.bytes += got.Size
	}
	progress.Entries.Add(1)
	if !e.IsDir && e.Kind == "" && !job.manifest {
		progress.Bytes.Add(e.Size)
	}
}

// compare checks the entry e against its record in the manifest, marking the record seen
// (what is not seen at the end is missing), and returns the SHA-256 e's data must have and
// the first thing that is wrong, if anything: the record, the data's size, the owner. A
// symlink's data must be its recorded target. A record is met once: a second entry of its
// name is not in the manifest.
func (x *manifestIndex) compare(e *Entry) (string, *Problem) {
	meta := e.RecordedMeta(x.Index)
	var sum string
	var p *Problem
	switch {
	case e.IsDir:
		// Every folder backup stores has its record from manifest v2 on: a folder entry
		// without one was added by another hand.
		if take(x.FindDir(e.Name), x.seenDirs) < 0 && x.v2 {
			return "", &Problem{Entry: e.StoredName(), Reason: "not in the manifest"}
		}
	case e.Kind == skiprules.KindSymlink && x.v2:
		sum, p = x.compareSymlink(e)
	default:
		sum, p = x.compareListed(e)
	}
	if p == nil {
		p = compareOwner(e, meta)
	}
	if p == nil {
		p = compareMode(e, meta)
	}
	return sum, p
}

// take marks the record at i (a position Find* returned) seen and returns i; -1 when there
// is none or it was seen before.
func take(i int, seen []bool) int {
	if i < 0 || seen[i] {
		return -1
	}
	seen[i] = true
	return i
}

func (x *manifestIndex) compareSymlink(e *Entry) (string, *Problem) {
	i := take(x.FindSymlink(e.Name), x.seenSymlinks)
	if i < 0 {
		return "", &Problem{Entry: e.Name, Reason: "not in the manifest"}
	}
	want := x.symlinks[i]
	if e.Size != int64(len(want.Target)) {
		return targetSum(want.Target), &Problem{Entry: e.Name, Reason: fmt.Sprintf("symlink target of %d bytes, the manifest says %q", e.Size, want.Target)}
	}
	if err := CheckTarget(want.Target); err != nil {
		return targetSum(want.Target), &Problem{Entry: e.Name, Reason: err.Error()}
	}
	return targetSum(want.Target), nil
}

// missing lists what the manifest records and compare did not meet, files first.
func (x *manifestIndex) missing() []Problem {
	var out []Problem
	for i, f := range x.files {
		if !x.seenFiles[i] {
			out = append(out, Problem{Entry: f.Path, Reason: "in the manifest but missing from the archive"})
		}
	}
	for i, l := range x.symlinks {
		if !x.seenSymlinks[i] {
			out = append(out, Problem{Entry: l.Path, Reason: "symlink in the manifest but missing from the archive"})
		}
	}
	for i, d := range x.dirs {
		if !x.seenDirs[i] {
			out = append(out, Problem{Entry: d.Path + "/", Reason: "directory in the manifest but missing from the archive"})
		}
	}
	return out
}

// compareListed checks the file entry e against its record in the manifest and returns the
// SHA-256 e must have and what is wrong, if anything.
func (x *manifestIndex) compareListed(e *Entry) (string, *Problem) {
	i := take(x.FindFile(e.Name), x.seenFiles)
	switch {
	case i < 0:
		return "", &Problem{Entry: e.StoredName(), Reason: "not in the manifest"}
	case e.Kind != "":
		return "", &Problem{Entry: e.Name, Reason: fmt.Sprintf("a %s entry, the manifest says a file", e.Kind)}
	case e.Size != x.files[i].Size:
		return x.files[i].SHA256.String(), &Problem{Entry: e.Name, Reason: fmt.Sprintf("size %d, the manifest says %d", e.Size, x.files[i].Size)}
	}
	return x.files[i].SHA256.String(), nil
}

// ctxDiscard discards what is written to it, and stops a large entry at once when ctx is
// done.
type ctxDiscard struct{ ctx context.Context }

func (w ctxDiscard) Write(b []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	return len(b), nil
}
