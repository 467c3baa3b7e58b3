package archive

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"slices"
	"sync/atomic"

	"backup/format"
)

// A reference is trusted only when its file holds the bytes its receipt describes: an edit
// of the archive that makes an entry and the manifest agree (CRC-32, sha256, raw_sha256)
// cannot also keep the archive's SHA-256, which the receipt records. So the whole file is
// hashed before any of its entries is used. Its central directory is parsed before that
// hash, though, and its manifest beside it (the parse says what there is to reuse), so each
// range the parse read is remembered with the SHA-256 of the bytes it got, and the hash
// checks on its way that the file held those very bytes there: a file changed between its
// parse and its hash is not trusted either. The hash takes the manifest's ranges when it
// reaches the manifest's entry, and fails on one that begins where it has been already.
// The same pass takes a keyed digest of each entry's compressed bytes, which the bytes
// copied must have (see refpass.go).

// ErrNotAsRecorded is the error of a reference whose bytes are not those it was expected
// to hold: another size or SHA-256, or bytes that changed while it was opened.
var ErrNotAsRecorded = errors.New("its SHA-256 is not the one its receipt records")

// readRecord is a range of the file that the parse read, and the SHA-256 of what it got.
type readRecord struct {
	off, end int64
	sum      format.Digest
}

func byOffset(a, b readRecord) int { return cmp.Compare(a.off, b.off) }

// recordingReader reads through ra and remembers each range read. The parse is one
// goroutine, so it needs no lock; the pass reads what it recorded once it is over.
type recordingReader struct {
	ra    io.ReaderAt
	reads []readRecord
	// stopped ends the recording once the hash has checked what the parse read: an
	// encrypted reference's entries are later read through this reader, from workers.
	stopped atomic.Bool
}

func (r *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ra.ReadAt(p, off)
	if n > 0 && !r.stopped.Load() {
		r.reads = append(r.reads, recordOf(p[:n], off))
	}
	return n, err
}

// recordOf is the record of b, read at off.
func recordOf(b []byte, off int64) readRecord {
	return readRecord{off: off, end: off + int64(len(b)), sum: sha256.Sum256(b)}
}

// hashBufSize is the size of the reads that hash a reference: large, since they are
// sequential and the file is often hundreds of MB.
const hashBufSize = 1 << 20

// rangeCheck hashes, as the file streams past, each range the parse read, and compares it
// with what the parse got there.
type rangeCheck struct {
	reads []readRecord // sorted by offset
	next  int          // reads[next:] have not started yet
	open  []openRange  // started, not yet ended
}

type openRange struct {
	readRecord
	h hash.Hash
}

// feed gives the check the bytes of chunk, which are at offset at; false when a range that
// ends in it does not hold what the parse got.
func (c *rangeCheck) feed(chunk []byte, at int64) bool {
	end := at + int64(len(chunk))
	for c.next < len(c.reads) && c.reads[c.next].off < end {
		c.open = append(c.open, openRange{c.reads[c.next], sha256.New()})
		c.next++
	}
	keep := c.open[:0]
	for _, o := range c.open {
		lo, hi := max(o.off, at), min(o.end, end)
		o.h.Write(chunk[lo-at : hi-at])
		if o.end > end {
			keep = append(keep, o)
		} else if format.Digest(o.h.Sum(nil)) != o.sum {
			return false
		}
	}
	c.open = keep
	return true
}

// add gives the check the ranges of a parse that ended after the pass began, fed the
// offset the pass has reached: a range before it, whose bytes have gone by, fails it.
func (c *rangeCheck) add(reads []readRecord, fed int64) bool {
	for _, r := range reads {
		if r.off < fed {
			return false
		}
	}
	c.reads = append(slices.Clone(c.reads[c.next:]), reads...)
	slices.SortFunc(c.reads, byOffset)
	c.next = 0
	return true
}

// readGate is where a pass waits for a parse that runs beside it: before the bytes at off,
// where the parse began to read, it takes the ranges the parse read (wait says whether the
// parse succeeded).
type readGate struct {
	off  int64
	wait func() (reads []readRecord, ok bool)
}

// done reports whether every range was checked: one that reached past the end of the file
// as it was hashed was read from a file that has since been cut short.
func (c *rangeCheck) done() bool {
	return c.next == len(c.reads) && len(c.open) == 0
}
