package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"backup/format"
	"backup/skiprules"
)

// What a restore writes, verify would pass: its data reach the restore only through
// CopyChecked, which checks them as verify does, and it asks CheckHeaders and CheckRecord
// before it writes anything of an entry. The rule is this API, not a convention each caller
// keeps.

// errNotListed is the damage of an entry of a backup's archive that its manifest does not
// list.
var errNotListed = errors.New("not in the manifest")

// CheckHeaders says why e cannot be read from its headers alone: encrypted, a compression
// method this reader lacks, a directory with data, or a local header that disagrees with
// the central directory; nil when its data can be read. Verify asks it of every entry, and
// restore of every entry it selects, before reading any data.
func (e *Entry) CheckHeaders() error {
	return checkHeaders(e.file(), e.local)
}

// CheckHeadersAll calls fn with what CheckHeaders says of each of entries, in their order.
// The local headers (and data descriptors) of neighbouring small entries are read with one
// read of up to spanMax bytes, as verify's batches read them (see verify_batch.go), rather
// than a read or two each: restore asks it of every entry it selects before it writes
// anything. It stops between spans once ctx is done, and returns ctx's error: each span is
// a read, and a request when the archive is in a bucket.
func CheckHeadersAll(ctx context.Context, entries []*Entry, fn func(*Entry, error)) error {
	return checkHeadersSpans(ctx, entries, func(_ int, e *Entry, _ localSpan, err error) { fn(e, err) })
}

// CoverageProblem is what the check of where the entries lie finds (see coverage.go), with
// the entry it names: nil for the bytes before the first entry, and for an entry of the
// manifest's name.
type CoverageProblem struct {
	Entry *Entry
	Problem
}

// CheckHeadersCovering calls fn with what CheckHeaders says of each of r's entries, as
// CheckHeadersAll does, then checks, as verify does, that the entries lie end to end from
// the first local header to the central directory, and returns what that finds: restore
// asks it so that an archive verify fails (a hidden entry between two others, a local
// header whose fields run into the next entry) does not restore as complete.
func (r *Reader) CheckHeadersCovering(ctx context.Context, fn func(*Entry, error)) ([]CoverageProblem, error) {
	items := r.coverageItems()
	err := checkHeadersSpans(ctx, r.Entries, func(i int, e *Entry, span localSpan, err error) {
		if err == nil {
			items[i].end = span.end
		}
		fn(e, err)
	})
	if err != nil {
		return nil, err
	}
	var out []CoverageProblem
	for _, p := range r.coverage(items) {
		var e *Entry
		if p.index >= 0 && p.index < len(r.Entries) {
			e = r.Entries[p.index]
		}
		out = append(out, CoverageProblem{e, p.Problem})
	}
	return out, nil
}

// checkHeadersSpans is CheckHeadersAll, fn also given each entry's index in entries and,
// when its headers read, where its data start and end. The spans of a block of entries are
// checked by as many goroutines as there are CPUs (at most headerWorkers), and fn is then
// called for each, in order: a check is mostly CPU (a header parsed and compared with its
// record), some 1.5 µs an entry, and nothing can be written before all are done: 50 ms of
// a restore of the bench corpus on one core. A block bounds what waits for fn.
func checkHeadersSpans(ctx context.Context, entries []*Entry, fn func(int, *Entry, localSpan, error)) error {
	var found []headerFound
	for start := 0; start < len(entries); {
		runs := headerRuns(entries, start)
		end := runs[len(runs)-1].end
		found = slices.Grow(found[:0], end-start)[:end-start]
		checkRuns(ctx, entries, runs, found[:end-start], start)
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, f := range found[:end-start] {
			fn(start+i, entries[start+i], f.span, f.err)
		}
		start = end
	}
	return nil
}

const (
	headerBlock   = 1 << 12 // entries whose headers are checked before fn is called for them
	headerWorkers = 4
)

// headerFound is what the check of an entry's headers found.
type headerFound struct {
	span localSpan
	err  error
}

// headerRun is a run of neighbouring entries, whose headers one read gets.
type headerRun struct{ start, end int }

// headerRuns splits the block of entries that begins at start into runs.
func headerRuns(entries []*Entry, start int) []headerRun {
	var runs []headerRun
	for i := start; i < len(entries) && i-start < headerBlock; {
		j, _, _ := neighbours(entries, i, headerSpan)
		runs = append(runs, headerRun{i, j})
		i = j
	}
	return runs
}

// checkRuns checks the headers of runs, putting what it finds of entries[i] at
// found[i-base]; it stops between runs once ctx is done.
func checkRuns(ctx context.Context, entries []*Entry, runs []headerRun, found []headerFound, base int) {
	var next atomic.Int64
	check := func() {
		// The span covers what the checks read, local headers and descriptors, not the
		// entries' data: the plan checks files that DEST holds already, whose data restore
		// never reads.
		s := Span{spanOf: headerSpan}
		for k := next.Add(1) - 1; k < int64(len(runs)) && ctx.Err() == nil; k = next.Add(1) - 1 {
			r := runs[k]
			s.Set(entries[r.start:r.end])
			for i, e := range entries[r.start:r.end] {
				span, err := dataAt(e.file(), s.loc(e))
				found[r.start+i-base] = headerFound{span, err}
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), headerWorkers, len(runs))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(check)
	}
	check()
	wg.Wait()
}

// Span reads a run of neighbouring entries (NextSpan) with one read, when the first of them
// is read, for CopyCheckedIn and CheckHeadersAll: restore's workers are handed entries in
// such runs, and read them as verify's workers read their batches. A read the span does not
// hold goes to the archive, so every entry is read as it would be alone.
type Span struct {
	run    []*Entry
	ahead  readAhead
	ra     io.ReaderAt // the span, or nil: each entry is read from the archive
	loaded bool
	// spanOf says what of an entry the span must hold: entrySpan when nil, headerSpan for
	// CheckHeadersAll.
	spanOf func(*Entry) (lo, hi int64, near bool)
}

// NextSpan returns the end of the run of neighbouring entries that begins at i: i+1 for an
// entry too large to share a span.
func NextSpan(entries []*Entry, i int) int {
	j, _, _ := neighbours(entries, i, entrySpan)
	return j
}

// Set makes s the span of run, a run NextSpan gave; nothing is read yet.
func (s *Span) Set(run []*Entry) {
	s.run, s.ra, s.loaded = run, nil, false
}

// loc is where e, an entry of the run, is read from: through the span, once it is read.
func (s *Span) loc(e *Entry) localRef {
	if s == nil || len(s.run) == 0 {
		return e.local
	}
	if !s.loaded {
		s.loaded = true
		spanOf := s.spanOf
		if spanOf == nil {
			spanOf = entrySpan
		}
		if _, lo, hi := neighbours(s.run, 0, spanOf); hi > lo {
			s.ra = s.ahead.loadSpan(s.run[0].local.ra, lo, hi)
		}
	}
	loc := e.local
	if s.ra != nil {
		loc.ra = s.ra
	}
	return loc
}

// neighbours returns the end j of the run of entries from i that share a span [lo, hi) of
// at most spanMax bytes and batchMax entries; an entry too large to share one is alone,
// with an empty span.
func neighbours(entries []*Entry, i int, spanOf func(*Entry) (lo, hi int64, near bool)) (j int, lo, hi int64) {
	lo, hi, near := spanOf(entries[i])
	if !near {
		return i + 1, 0, 0
	}
	for j = i + 1; j < len(entries) && j-i < batchMax; j++ {
		l, h, ok := spanOf(entries[j])
		if !ok || max(h, hi)-min(l, lo) > spanMax {
			break
		}
		lo, hi = min(l, lo), max(h, hi)
	}
	return j, lo, hi
}

// CheckRecord says why e, an entry of r, is not what r's manifest records, from the records
// alone: a file, symlink or other special entry the manifest does not list, a file of
// another size than recorded, a directory stored after the manifest (which backup writes
// last). It is nil in an archive without a manifest, where there is nothing to compare with.
// CopyChecked asks it too; a caller asks it first to know before it makes anything.
func (r *Reader) CheckRecord(e *Entry) error {
	_, err := r.wantSum(e)
	return err
}

// CopyChecked streams the data of e, an entry of r, into w through buf, and checks them as
// verify does: their size and CRC-32 against e's headers and, in a backup's archive,
// CheckRecord and the SHA-256 the manifest records (for a symlink, its recorded target's).
// A nil error means every byte written to w is right: a caller that writes into a temp file
// keeps it only then. An error of w comes back wrapped (errors.Is and errors.As find it);
// any other error is damage of e (ErrSHA256 among them). n counts the bytes of data read.
func (r *Reader) CopyChecked(w io.Writer, e *Entry, buf []byte) (n int64, err error) {
	return r.CopyCheckedIn(nil, w, e, buf)
}

// CopyCheckedIn is CopyChecked of e, an entry of the span s (Set with the run that holds
// e), read through it; s nil reads e alone.
func (r *Reader) CopyCheckedIn(s *Span, w io.Writer, e *Entry, buf []byte) (n int64, err error) {
	want, err := r.wantSum(e)
	if err != nil {
		return 0, err
	}
	got, err := copyCheckedAt(w, e.file(), s.loc(e), want, buf)
	return got.Size, err
}

// wantSum returns the SHA-256 (hex) that the data of e must have, "" when there is nothing
// to compare them with, and why e is not what the manifest records, found in the manifest's
// index (joinManifest): its record, its mode, which restore would give it, or the owner of
// its ux field, which unzip -X and bsdtar give it where restore gives the manifest's.
func (r *Reader) wantSum(e *Entry) (string, error) {
	sum, err := r.recordSum(e)
	if err != nil || r.Manifest == nil {
		return sum, err
	}
	meta := e.RecordedMeta(r.index)
	p := compareOwner(e, meta) // in verify's order
	if p == nil {
		p = compareMode(e, meta)
	}
	if p != nil {
		err = errors.New(p.Reason)
	}
	return sum, err
}

// recordSum is wantSum from e's record alone.
func (r *Reader) recordSum(e *Entry) (string, error) {
	switch {
	case r.Manifest == nil:
		return "", nil
	case e.IsDir && e.hdr.afterManifest():
		return "", errAfterManifest
	case e.IsDir && r.Manifest.Schema != format.ManifestSchemaV1 && r.index.FindDir(e.Name) < 0:
		return "", errNotListed // see manifestIndex.compare
	case e.IsDir:
		return "", nil
	case e.Kind == skiprules.KindSymlink:
		if l, ok := r.index.Symlink(e.Name); ok {
			return targetSum(l.Target), nil
		}
		return "", errNotListed
	case e.Kind != "":
		return "", errNotListed
	}
	f, ok := r.index.File(e.Name)
	switch {
	case !ok:
		return "", errNotListed
	case f.Size != e.Size:
		return "", fmt.Errorf("size %d, the manifest says %d", e.Size, f.Size)
	}
	return f.SHA256.String(), nil
}
