package archive

import (
	"errors"
	"fmt"
	"io"

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
// anything, on one goroutine.
func CheckHeadersAll(entries []*Entry, fn func(*Entry, error)) {
	var ahead readAhead
	for i := 0; i < len(entries); {
		j, lo, hi := neighbours(entries, i)
		ra := ahead.loadSpan(entries[i].local.ra, lo, hi)
		for _, e := range entries[i:j] {
			loc := e.local
			if hi > lo {
				loc.ra = ra
			}
			fn(e, checkHeaders(e.file(), loc))
		}
		i = j
	}
}

// neighbours returns the end j of the run of entries from i that share a span [lo, hi) of
// at most spanMax bytes and batchMax entries; an entry too large to share one is alone,
// with an empty span.
func neighbours(entries []*Entry, i int) (j int, lo, hi int64) {
	lo, hi, near := entrySpan(entries[i])
	if !near {
		return i + 1, 0, 0
	}
	for j = i + 1; j < len(entries) && j-i < batchMax; j++ {
		l, h, ok := entrySpan(entries[j])
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
	want, err := r.wantSum(e)
	if err != nil {
		return 0, err
	}
	got, err := copyChecked(w, e, want, buf)
	return got.Size, err
}

// wantSum returns the SHA-256 (hex) that the data of e must have, "" when there is nothing
// to compare them with, and why e is not what the manifest records, found in the manifest's
// index (addSums).
func (r *Reader) wantSum(e *Entry) (string, error) {
	switch {
	case r.Manifest == nil:
		return "", nil
	case e.IsDir && e.hdr.afterManifest:
		return "", errAfterManifest
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
