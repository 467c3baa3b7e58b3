package restore

import (
	"io"
	"slices"

	"backup/archive"
	"backup/format"
)

// checkEntries moves the selected entries that verify would report from the plan to Damaged,
// before anything is written, so that restore and verify give one verdict on one archive:
// entries that cannot be read by their headers alone (encrypted, a method this reader lacks,
// a local header that disagrees with the central directory, bytes that overlap another
// entry's, as in a zip bomb), and special entries whose data
// fail their check, since restore never reads those otherwise, and bytes between the entries
// that no entry covers. The entry "./", which restore passes over, is checked too: it is one
// of the archive's entries, damaged or not as verify says. The files' data are checked
// as they are written. It returns ctx's error when the plan is interrupted.
func (p *Plan) checkEntries() error {
	special := make(map[string]bool, len(p.Skipped))
	for _, s := range p.Skipped {
		special[s.Path] = true
	}
	isSpecial := func(e *archive.Entry) bool { return e.Kind != "" && special[e.Name] }
	// p.entries keeps the archive's order (selectEntries), so one walk of both finds them,
	// where a set of the selected entries took 36 MB at a million files.
	checked := make([]*archive.Entry, 0, len(p.entries)+len(p.Skipped))
	next := 0
	for _, e := range p.r.Entries {
		selected := next < len(p.entries) && p.entries[next] == e
		if selected {
			next++
		}
		if selected || isSpecial(e) || e.IsRoot() {
			checked = append(checked, e)
		}
	}
	damaged := map[*archive.Entry]bool{}
	var buf []byte
	overlapping := p.r.Overlapping()
	check := func(e *archive.Entry, err error) {
		if err == nil {
			err = overlapping[e]
		}
		if err == nil && isSpecial(e) {
			if buf == nil {
				buf = make([]byte, bufSize)
			}
			_, err = p.r.CopyChecked(io.Discard, e, buf)
		}
		if err != nil {
			p.Damaged = append(p.Damaged, archive.Problem{Entry: e.StoredName(), Reason: err.Error()})
			damaged[e] = true
		}
	}
	// When every entry is checked, whether they lie end to end is checked too, as verify
	// checks it. A restore of some (--include) reads only their headers, as few bytes of a
	// large archive in a bucket as it can: verify checks the rest.
	var covering []archive.CoverageProblem
	var err error
	if len(checked) == len(p.r.Entries) {
		covering, err = p.r.CheckHeadersCovering(p.ctx, check)
	} else {
		err = archive.CheckHeadersAll(p.ctx, checked, check)
	}
	if err != nil {
		return err
	}
	// Bytes no entry covers, or entries that overlap, are damage of the archive, reported
	// whatever is selected; an entry they name is not restored.
	var wasChecked map[*archive.Entry]bool // made only for an archive with such damage
	for _, c := range covering {
		if wasChecked == nil {
			wasChecked = make(map[*archive.Entry]bool, len(checked))
			for _, e := range checked {
				wasChecked[e] = true
			}
		}
		if c.Entry != nil && wasChecked[c.Entry] {
			if damaged[c.Entry] {
				continue
			}
			damaged[c.Entry] = true
		}
		p.Damaged = append(p.Damaged, c.Problem)
	}
	if len(damaged) > 0 {
		p.drop(damaged)
	}
	return nil
}

// drop takes the damaged entries out of what the plan restores and counts.
func (p *Plan) drop(damaged map[*archive.Entry]bool) {
	p.entries = slices.DeleteFunc(p.entries, func(e *archive.Entry) bool { return damaged[e] })
	for e := range damaged {
		switch {
		case e.IsRoot():
			// Never in the plan: restore passes it over.
		case p.storedSymlink(e) && !p.opts.SkipSymlinks:
			p.Symlinks--
		case e.Kind != "":
			p.Skipped = slices.DeleteFunc(p.Skipped, func(s format.Skipped) bool { return s.Path == e.Name })
		case e.IsDir:
			delete(p.dirs, e.Name)
			p.Dirs--
		default:
			p.Files--
			p.Bytes -= e.Size
		}
	}
}
