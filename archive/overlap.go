package archive

import (
	"cmp"
	"fmt"
	"slices"

	"backup/format"
)

// Overlapping returns the entries whose bytes overlap another entry's, as the central
// directory places them, with the damage to report: restore refuses them, as verify does,
// without reading anything. An entry's bytes are taken to be at least its local header
// with the central name and no extra field, and its compressed data: entries whose data
// are another's local entry (a zip bomb) overlap by these alone.
func (r *Reader) Overlapping() map[*Entry]error {
	type span struct {
		e       *Entry // nil for an entry of the manifest's name
		lo, end int64
	}
	spans := make([]span, 0, len(r.Entries)+len(r.manifests))
	for _, e := range r.Entries {
		if e.local.off >= 0 {
			n := int64(len(e.rawName()))
			spans = append(spans, span{e, e.local.off, e.local.off + localLen + n + int64(e.hdr.csize)})
		}
	}
	for _, m := range r.manifests {
		if m.loc.off >= 0 {
			spans = append(spans, span{nil, m.loc.off, m.loc.off + localLen + int64(len(m.f.Name)) + int64(m.f.CompressedSize64)})
		}
	}
	byOffset := func(a, b span) int { return cmp.Compare(a.lo, b.lo) }
	if !slices.IsSortedFunc(spans, byOffset) {
		slices.SortStableFunc(spans, byOffset)
	}
	name := func(s span) string {
		if s.e == nil {
			return format.ManifestName
		}
		return s.e.StoredName()
	}
	var out map[*Entry]error
	mark := func(s span, other span) {
		if s.e == nil {
			return
		}
		if out == nil {
			out = map[*Entry]error{}
		}
		if out[s.e] == nil {
			out[s.e] = fmt.Errorf("damaged: overlaps the entry %s (entries that overlap, as in a zip bomb)", name(other))
		}
	}
	var reach span // the span that reaches furthest so far
	for k, s := range spans {
		if k > 0 && s.lo < reach.end {
			mark(s, reach)
			mark(reach, s)
		}
		if k == 0 || s.end > reach.end {
			reach = s
		}
	}
	return out
}
