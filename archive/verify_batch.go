package archive

import (
	"context"
	"errors"
	"io"
)

// The entries are handed to the workers in batches of neighbours: a run of entries in
// archive order whose local headers and data lie within spanMax bytes, which the worker
// reads with one ReadAt before checking them one by one from memory. Most entries of a
// backup are a few KiB: one at a time, each took a channel hand-off and two reads (its
// local header, then its data), a system call each, or for an archive in a bucket a
// request each. An entry larger than half a span goes alone and is streamed as before.
//
// What the checks of an entry read is the same either way: the span answers only a read
// that lies wholly in the bytes it read, any other read goes to the archive itself, so an
// entry whose bytes the span could not read (a damaged chunk of an encrypted archive, a
// failed request) meets the error of its own read, as it did alone.

const (
	// spanMax is the most a batch's entries span, and the buffer each worker reads it into.
	spanMax = 256 << 10
	// batchMax bounds the jobs of a batch, so that what waits in the channel stays small
	// when the entries are tiny.
	batchMax = 1024
)

// batch is a run of entries for one worker, with the bytes [lo, hi) of the archive that
// hold them; hi == lo when nothing is to be read ahead.
type batch struct {
	jobs   []entryJob
	lo, hi int64
}

// batcher groups the jobs a dispatcher hands out, in archive order, into batches. Only the
// dispatching goroutine uses it.
type batcher struct {
	ctx      context.Context
	work     chan<- batch
	oneByOne bool // every entry alone, nothing read ahead
	cur      batch
}

// add hands job on, in a batch with its neighbours; false once ctx is done.
func (b *batcher) add(job entryJob) bool {
	lo, hi, near := entrySpan(job.entry)
	near = near && !b.oneByOne
	if n := len(b.cur.jobs); n > 0 && (!near || n == batchMax || max(hi, b.cur.hi)-min(lo, b.cur.lo) > spanMax) {
		if !b.flush() {
			return false
		}
	}
	switch {
	case !near:
		b.cur.jobs = append(b.cur.jobs, job)
		return b.flush()
	case len(b.cur.jobs) == 0:
		b.cur.lo, b.cur.hi = lo, hi
	default:
		b.cur.lo, b.cur.hi = min(lo, b.cur.lo), max(hi, b.cur.hi)
	}
	b.cur.jobs = append(b.cur.jobs, job)
	return true
}

// flush hands on the batch being gathered; false once ctx is done.
func (b *batcher) flush() bool {
	if len(b.cur.jobs) == 0 {
		return true
	}
	select {
	case b.work <- b.cur:
		b.cur = batch{} // the worker owns the jobs sent
		return true
	case <-b.ctx.Done():
		return false
	}
}

// close hands on what is gathered, unless ctx is done, and closes the channel.
func (b *batcher) close() {
	b.flush()
	close(b.work)
}

// entrySpan is where e's local header, data and data descriptor most likely lie (the
// local header's extra field is taken to be the central one's length), and whether they
// are small enough to share a span. An entry whose local header was not found reads
// nothing ahead. The span ends where reading e alone stops: after its data, or after the
// 24 bytes checkDescriptor reads when the central header says a descriptor follows; not
// beyond, where a bucket's next block or an encrypted archive's next chunks may begin.
func entrySpan(e *Entry) (lo, hi int64, near bool) {
	return spanOf(e, false)
}

// headerSpan is entrySpan of what CheckHeaders reads of e: its local header, and its data
// descriptor when the central header says it has one, but not its data otherwise.
func headerSpan(e *Entry) (lo, hi int64, near bool) {
	return spanOf(e, true)
}

func spanOf(e *Entry, headers bool) (lo, hi int64, near bool) {
	if e.local.ra == nil || e.local.off < 0 {
		return 0, 0, false
	}
	h := e.hdr
	lo = e.local.off
	hi = lo + localLen + int64(len(e.rawName())) + int64(h.extra)
	desc := h.flags&flagDataDesc != 0
	if desc || !headers {
		hi += int64(h.csize)
	}
	if desc {
		hi += 24
	}
	return lo, hi, h.csize <= spanMax/2 && hi > lo && hi-lo <= spanMax/2
}

// readAhead holds the bytes [off, off+len(data)) of ra, read ahead for a batch.
type readAhead struct {
	ra   io.ReaderAt
	off  int64
	data []byte
	// err is the error the read ahead met before the span's end, other than its end of
	// file: the first read past the bytes it got returns it, as that read would have met
	// it had the entries been read one by one, so that a failed read is never passed over
	// because reading again got past it.
	err error
	hi  int64 // where the span read ahead ends
}

// load reads b's span into w's buffer, which it allocates the first time. It returns the
// reader the batch's entries are read through: w, or ra alone when nothing is to be read
// ahead or ctx is done.
func (w *readAhead) load(ctx context.Context, b batch) io.ReaderAt {
	ra := b.jobs[0].entry.local.ra
	if ctx.Err() != nil {
		return ra
	}
	return w.loadSpan(ra, b.lo, b.hi)
}

// loadSpan reads the bytes [lo, hi) of ra, at most spanMax of them, into w's buffer, and
// returns w; ra alone when the span is empty.
func (w *readAhead) loadSpan(ra io.ReaderAt, lo, hi int64) io.ReaderAt {
	if hi <= lo || ra == nil {
		return ra
	}
	if w.data == nil {
		w.data = make([]byte, spanMax)
	}
	// Whatever the error, the n bytes read are the archive's; reads beyond them go to ra.
	// The first that reads what the read ahead failed on gets its error even when reading
	// again gets past it; an end of file they meet themselves.
	n, err := ra.ReadAt(w.data[:cap(w.data)][:hi-lo], lo)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	w.ra, w.off, w.data, w.err, w.hi = ra, lo, w.data[:n], err, hi
	return w
}

// ReadAt reads from the bytes read ahead when they hold all of p, else from the archive.
func (w *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if at := off - w.off; at >= 0 && at <= int64(len(w.data)) && int64(len(p)) <= int64(len(w.data))-at {
		return copy(p, w.data[at:]), nil
	}
	n, err := w.ra.ReadAt(p, off)
	if w.err != nil && off < w.hi && off+int64(len(p)) > w.off+int64(len(w.data)) {
		// The first read of the bytes the read ahead failed on: when reading them again
		// succeeds, the failure still stands.
		if err == nil {
			n, err = 0, w.err
		}
		w.err = nil
	}
	return n, err
}
