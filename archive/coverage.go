package archive

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"

	"backup/format"
)

// A zip is read two ways: through its central directory (Go's reader, unzip, bsdtar on a
// file), or from its first byte on, one local entry after another (bsdtar or Java reading a
// pipe). The two agree only when the entries the central directory lists lie end to end,
// from the first local header to the central directory: bytes that no entry covers may
// hold a whole local entry that streaming readers extract and the central directory does
// not list, and entries that overlap are the building block of the non-recursive zip bomb
// (a few KB restored as petabytes), which unzip -t refuses. Verify checks both, from where
// its workers found each entry to end (after its data and its data descriptor), sorted by
// offset once: no pass over the archive of its own.
//
// Bytes before the first entry are a self-extractor's stub in an archive of another tool:
// Info-ZIP's unzip warns about them and tests the archive all the same, and so does verify,
// unless they hold a local header signature (an entry a streaming reader would find). Backup
// never writes such bytes, so in an archive with a manifest any are damage.

// coverageItem is an entry as the coverage check sees it: its bytes [lo, end), and its
// index in archive order (an entry of the manifest's name, len(Entries) and on); end is -1
// while its check has not got as far as its end. 24 bytes: verify holds one an entry.
type coverageItem struct {
	lo, end int64
	index   int32
}

// coverageItems are the items of r's entries, in archive order, for the workers to note
// where each ends.
func (r *Reader) coverageItems() []coverageItem {
	items := make([]coverageItem, len(r.Entries), len(r.Entries)+len(r.manifests))
	for i, e := range r.Entries {
		items[i] = coverageItem{lo: e.local.off, end: -1, index: int32(i)}
	}
	return items
}

// coverage checks that the entries of items, whose ends the workers noted (-1: unknown,
// when the entry failed its check), and the entries of the manifest's name, lie end to end
// up to the central directory, and returns what it finds. It sorts items.
func (r *Reader) coverage(items []coverageItem) []foundProblem {
	if r.dirStart < 0 {
		return nil // the central directory did not read back: every entry fails already
	}
	var failed []foundProblem
	for j, m := range r.manifests {
		end := int64(-1)
		span, err := dataAt(m.f, m.loc)
		switch {
		case err == nil:
			end = span.end
		case r.ManifestErr == nil:
			// The manifest was read through these very headers: only a read that fails
			// now fails them, and that is not to be dropped.
			failed = append(failed, foundProblem{index: len(r.Entries), step: 2, Problem: Problem{Entry: m.f.Name, Reason: err.Error()}})
		}
		items = append(items, coverageItem{lo: m.loc.off, end: end, index: int32(len(r.Entries) + j)})
	}
	items = slices.DeleteFunc(items, func(it coverageItem) bool { return it.lo < 0 })
	byOffset := func(a, b coverageItem) int { return cmp.Compare(a.lo, b.lo) }
	if !slices.IsSortedFunc(items, byOffset) {
		slices.SortStableFunc(items, byOffset)
	}
	return append(failed, r.checkCoverage(items)...)
}

// checkCoverage is coverage of items, sorted by offset.
func (r *Reader) checkCoverage(items []coverageItem) []foundProblem {
	var found []foundProblem
	add := func(it coverageItem, reason string) {
		found = append(found, foundProblem{index: min(int(it.index), len(r.Entries)), step: 2, Problem: Problem{Entry: r.itemName(it), Reason: reason}})
	}
	first := r.dirStart // no entry: all before the directory is a prefix
	if len(items) > 0 {
		first = items[0].lo
	}
	if p := r.prefixProblem(first); p != "" {
		found = append(found, foundProblem{index: -1, Problem: Problem{Reason: p}})
	}
	if len(items) == 0 {
		return found
	}
	end, last := int64(-1), items[0] // how far the entries so far reach, and which reaches it
	for _, it := range items {
		switch {
		case end < 0:
		case it.lo < end:
			add(it, fmt.Sprintf("damaged: its local header is inside the entry %s (entries that overlap, as in a zip bomb)", r.itemName(last)))
		case it.lo > end:
			add(it, fmt.Sprintf("damaged: %d bytes before its local header that no entry covers", it.lo-end))
		}
		switch {
		case it.end < 0:
			end = -1 // its check failed, and says so
		case it.end > end:
			end, last = it.end, it
		}
	}
	switch {
	case end < 0:
	case end < r.dirStart:
		add(last, fmt.Sprintf("damaged: %d bytes after it, before the central directory, that no entry covers", r.dirStart-end))
	case end > r.dirStart:
		add(last, "damaged: it runs into the central directory")
	}
	return found
}

func (r *Reader) itemName(it coverageItem) string {
	if int(it.index) < len(r.Entries) {
		return r.Entries[it.index].StoredName()
	}
	return format.ManifestName
}

// prefixProblem says what is wrong with the n bytes before the first entry: "" when there
// are none, or when they are a stub (see above).
func (r *Reader) prefixProblem(n int64) string {
	switch {
	case n <= 0:
		return ""
	case r.HasManifest:
		return fmt.Sprintf("damaged: %d bytes before the first entry, which backup never writes", n)
	}
	holds, err := holdsLocalSig(r.ra, n)
	switch {
	case err != nil:
		return fmt.Sprintf("the %d bytes before the first entry are unreadable: %v", n, err)
	case holds:
		return fmt.Sprintf("damaged: the %d bytes before the first entry hold a local header signature (an entry the central directory does not list)", n)
	}
	return ""
}

// holdsLocalSig reports whether the first n bytes of ra hold a local header signature;
// bytes cut short count as holding one, and a read that fails is the error.
func holdsLocalSig(ra io.ReaderAt, n int64) (bool, error) {
	sig := []byte{'P', 'K', 3, 4}
	buf := make([]byte, min(n, 64<<10)+3)
	for off := int64(0); off < n; off += int64(len(buf)) - 3 {
		m := min(int64(len(buf)), n+3-off) // 3 more: a signature that starts before n
		got, err := ra.ReadAt(buf[:m], off)
		if err := readFailed(err); err != nil {
			return false, err
		}
		if err != nil && got < 4 {
			return true, nil
		}
		if bytes.Contains(buf[:got], sig) {
			return true, nil
		}
	}
	return false, nil
}
