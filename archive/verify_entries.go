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
	copied  bool // see VerifyOptions.Copied: only its headers are checked
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
}

func (r *Reader) verifyEntries(ctx context.Context, res *VerifyResult, jobs int, progress *VerifyProgress, copied func(string) bool) error {
	jobs = max(1, min(jobs, len(r.Entries)))
	// A small buffer lets the workers take the next entry without waiting for this
	// goroutine to be scheduled; it holds pointers only, so memory stays bounded.
	work := make(chan entryJob, 4*jobs)
	results := make([]workerResult, jobs)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = checkEntries(ctx, work, progress) })
	}
	found := r.dispatch(ctx, res, work, copied)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, w := range results {
		found = append(found, w.found...)
		res.Bytes += w.bytes
	}
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
func (r *Reader) dispatch(ctx context.Context, res *VerifyResult, work chan<- entryJob, copied func(string) bool) []foundProblem {
	defer close(work)
	var found []foundProblem
	var x *manifestIndex
	if r.Manifest != nil {
		x = newManifestIndex(r.Manifest)
	}
	for i, e := range r.Entries {
		res.count(e)
		job := entryJob{index: i, entry: e, copied: copied != nil && !e.IsDir && e.Kind == "" && copied(e.Name)}
		if x != nil {
			var p *Problem
			job.wantSum, p = x.compare(e)
			if p != nil {
				found = append(found, foundProblem{index: i, Problem: *p})
			}
		}
		if r.Manifest != nil && e.IsDir && e.afterManifest {
			found = append(found, foundProblem{index: i, Problem: Problem{Entry: e.StoredName(), Reason: errAfterManifest.Error()}})
		}
		select {
		case work <- job:
		case <-ctx.Done():
			return nil
		}
	}
	if x != nil {
		for _, p := range x.missing(r.Manifest) {
			// After every entry's problems, as a sequential read finds them.
			found = append(found, foundProblem{index: len(r.Entries), Problem: p})
		}
	}
	return found
}

// checkEntries is one worker: it reads the entries it is handed, one at a time through a
// buffer of its own, until work is closed. Once ctx is done it reads nothing more and
// returns as soon as work is closed. It counts each entry checked in progress.
func checkEntries(ctx context.Context, work <-chan entryJob, progress *VerifyProgress) workerResult {
	var w workerResult
	buf := make([]byte, copyBufSize)
	for job := range work {
		if ctx.Err() != nil {
			continue
		}
		e := job.entry
		got, err := Checked{Size: e.Size}, error(nil)
		if job.copied {
			err = checkHeaders(e.file, e.local)
		} else {
			got, err = copyChecked(&progressWriter{ctx: ctx, w: io.Discard}, e, job.wantSum, buf)
		}
		switch {
		case ctx.Err() != nil:
			// Interrupted, not damaged: the caller returns ctx's error.
		case err != nil:
			w.found = append(w.found, foundProblem{index: job.index, step: 1,
				Problem: Problem{Entry: e.StoredName(), Reason: err.Error()}})
		case !e.IsDir && e.Kind == "":
			w.bytes += got.Size
		}
		progress.Entries.Add(1)
		if !e.IsDir && e.Kind == "" {
			progress.Bytes.Add(e.Size)
		}
	}
	return w
}

// compare checks the entry e against its record in the manifest, taking the record out of
// the index (what is left at the end is missing), and returns the SHA-256 e's data must
// have and the first thing that is wrong, if anything: the record, the data's size, the
// owner. A symlink's data must be its recorded target.
func (x *manifestIndex) compare(e *Entry) (string, *Problem) {
	meta := x.meta(e)
	var sum string
	var p *Problem
	switch {
	case e.IsDir:
		delete(x.dirs, e.Name)
	case e.Kind == skiprules.KindSymlink && x.v2:
		sum, p = compareSymlink(e, x.symlinks)
	default:
		sum, p = compareListed(e, x.files)
	}
	if p == nil {
		p = compareOwner(e, meta)
	}
	return sum, p
}

func compareSymlink(e *Entry, listed map[string]Symlink) (string, *Problem) {
	want, ok := listed[e.Name]
	delete(listed, e.Name)
	switch {
	case !ok:
		return "", &Problem{Entry: e.Name, Reason: "not in the manifest"}
	case e.Size != int64(len(want.Target)):
		return targetSum(want.Target), &Problem{Entry: e.Name, Reason: fmt.Sprintf("symlink target of %d bytes, the manifest says %q", e.Size, want.Target)}
	}
	return targetSum(want.Target), nil
}

// missing lists what m records and the index did not meet in the archive, files first.
func (x *manifestIndex) missing(m *Manifest) []Problem {
	var out []Problem
	for _, f := range m.Files {
		if _, missing := x.files[f.Path]; missing {
			out = append(out, Problem{Entry: f.Path, Reason: "in the manifest but missing from the archive"})
		}
	}
	for _, l := range m.Symlinks {
		if _, missing := x.symlinks[l.Path]; missing {
			out = append(out, Problem{Entry: l.Path, Reason: "symlink in the manifest but missing from the archive"})
		}
	}
	for _, d := range m.Dirs {
		if _, missing := x.dirs[d.Path]; missing {
			out = append(out, Problem{Entry: d.Path + "/", Reason: "directory in the manifest but missing from the archive"})
		}
	}
	return out
}

// compareListed checks the file entry e against its record in the manifest, taking the
// record out of listed (what is left at the end is missing), and returns the SHA-256 e must
// have and what is wrong, if anything.
func compareListed(e *Entry, listed map[string]File) (string, *Problem) {
	want, ok := listed[e.Name]
	delete(listed, e.Name)
	switch {
	case !ok:
		return "", &Problem{Entry: e.StoredName(), Reason: "not in the manifest"}
	case e.Kind != "":
		return "", &Problem{Entry: e.Name, Reason: fmt.Sprintf("a %s entry, the manifest says a file", e.Kind)}
	case e.Size != want.Size:
		return want.SHA256.String(), &Problem{Entry: e.Name, Reason: fmt.Sprintf("size %d, the manifest says %d", e.Size, want.Size)}
	}
	return want.SHA256.String(), nil
}
