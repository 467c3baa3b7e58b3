package format

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// Notes sums up a manifest's records of what was skipped, excluded and warned about, which
// its receipt copies and which verify lets go as it reads them (see decodeNotes): how many
// of each (Lost: the warnings of data lost) and a SHA-256 of each list, so that the receipt's
// copy can be held to the manifest without holding them.
type Notes struct {
	Skipped, Excluded, Warnings, Lost int
	sums                              [3][sha256.Size]byte // in the order of noteLists
}

// NotesOf sums up the lists as a manifest that holds them records them.
func NotesOf(skipped []Skipped, excluded []Excluded, warnings []Warning) Notes {
	var s noteSummer
	for _, x := range skipped {
		s.add(x)
	}
	for _, x := range excluded {
		s.add(x)
	}
	for _, x := range warnings {
		s.add(x)
	}
	return s.notes()
}

// Notes sums up m's notes: as they were read, when the reader let them go.
func (m *Manifest) Notes() Notes {
	if m.notes != nil {
		return *m.notes
	}
	return NotesOf(m.Skipped, m.Excluded, m.Warnings)
}

// noteSummer sums up notes one record at a time.
type noteSummer struct {
	n    [3]int
	lost int
	h    [3]hash.Hash
}

// add sums up one record of a Skipped, Excluded or Warning: each field length-prefixed, so
// that no two records hash alike.
func (s *noteSummer) add(rec any) {
	var k int
	var fields []string
	switch r := rec.(type) {
	case Skipped:
		k, fields = 0, []string{r.Path, r.Kind}
	case Excluded:
		k, fields = 1, []string{r.Path, r.Rule}
	case Warning:
		k, fields = 2, []string{r.Path, r.Op, r.Error, ""}
		if r.Lost {
			fields[3] = "lost"
			s.lost++
		}
	}
	if s.h[k] == nil {
		s.h[k] = sha256.New()
	}
	for _, f := range fields {
		s.h[k].Write(binary.AppendUvarint(nil, uint64(len(f))))
		s.h[k].Write([]byte(f))
	}
	s.n[k]++
}

// reset forgets the records of list k summed so far: a null given for it after them
// replaces them, as it does for encoding/json.
func (s *noteSummer) reset(k int) {
	if k == 2 {
		s.lost = 0
	}
	s.n[k], s.h[k] = 0, nil
}

func (s *noteSummer) notes() Notes {
	n := Notes{Skipped: s.n[0], Excluded: s.n[1], Warnings: s.n[2], Lost: s.lost}
	for k, h := range s.h {
		if h == nil {
			h = sha256.New()
		}
		h.Sum(n.sums[k][:0])
	}
	return n
}
