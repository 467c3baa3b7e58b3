package format

import (
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// Index looks a manifest's records up by path, by binary search in the manifest's own lists,
// so that a million records are not held a second time in maps. Verify, the read-back and
// restore all look records up through it: where a hostile manifest lists a path twice, each
// of them takes the first record.
type Index struct {
	m *Manifest
	// Where each find looks first: the records after those last found, since the archive's
	// entries are met in about the order the lists sort in.
	nextFile, nextDir, nextSymlink Hints
}

// Hints remembers where the last few finds in one sorted list ended, one place per reader
// that looked last: verify's and restore's workers each look records up in about the
// lists' order, each from a place of its own, and with a single place every worker's first
// find for an entry missed it for the other's and searched (51,000 searches restoring the
// bench corpus with two workers, 1,000 with one). Four places serve four workers; more
// workers search more often, never wrongly.
type Hints struct {
	next [4]atomic.Int32
	turn atomic.Uint32 // the place the next search's answer takes
}

// NewIndex indexes m, sorting its files, directories and symlinks by path in place where they
// are not sorted already (backup writes them sorted). The sort is stable, so that the first
// of two records of one path stays first.
func NewIndex(m *Manifest) *Index {
	sortBy(m.Files, func(f File) string { return f.Path })
	sortBy(m.Dirs, func(d Dir) string { return d.Path })
	sortBy(m.Symlinks, func(l Symlink) string { return l.Path })
	return &Index{m: m}
}

func sortBy[T any](s []T, key func(T) string) {
	cmp := func(a, b T) int { return strings.Compare(key(a), key(b)) }
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortStableFunc(s, cmp)
	}
}

// FindSorted returns the position of the first of n keys sorted in byte order that is name;
// -1 when none is. Lookups mostly come in about that order, and a caller often asks for
// one name several times over (a read-back asks for each entry's record up to four times),
// so at each place h holds it tries the key there first, then the one before it (the key
// last found), then searches, and leaves the place after the key found. key(i) must not
// copy the i-th record: a binary search passing each record by value copied 100-odd bytes
// per comparison, 4% of the CPU time of verifying the bench corpus's archive.
func FindSorted(n int, name string, key func(i int) string, h *Hints) int {
	first := func(i int) bool { return i >= 0 && i < n && key(i) == name && (i == 0 || key(i-1) != name) }
	for p := range h.next {
		switch i := int(h.next[p].Load()); {
		case first(i):
			h.next[p].Store(int32(i + 1))
			return i
		case first(i - 1):
			return i - 1
		}
	}
	i := sort.Search(n, func(i int) bool { return key(i) >= name })
	if i == n || key(i) != name {
		return -1
	}
	h.next[(h.turn.Add(1)-1)%uint32(len(h.next))].Store(int32(i + 1))
	return i
}

// Manifest is the manifest x indexes, its lists sorted by path.
func (x *Index) Manifest() *Manifest { return x.m }

// FindFile returns the position in Manifest().Files of the record of the file path; -1 when
// there is none.
func (x *Index) FindFile(path string) int {
	return FindSorted(len(x.m.Files), path, func(i int) string { return x.m.Files[i].Path }, &x.nextFile)
}

// FindDir returns the position in Manifest().Dirs of the record of the directory path; -1
// when there is none.
func (x *Index) FindDir(path string) int {
	return FindSorted(len(x.m.Dirs), path, func(i int) string { return x.m.Dirs[i].Path }, &x.nextDir)
}

// FindSymlink returns the position in Manifest().Symlinks of the record of the symlink path;
// -1 when there is none.
func (x *Index) FindSymlink(path string) int {
	return FindSorted(len(x.m.Symlinks), path, func(i int) string { return x.m.Symlinks[i].Path }, &x.nextSymlink)
}

// File returns the record of the file path; ok is false when the manifest lists none.
func (x *Index) File(path string) (File, bool) {
	if i := x.FindFile(path); i >= 0 {
		return x.m.Files[i], true
	}
	return File{}, false
}

// Symlink returns the record of the symlink path; ok is false when the manifest lists none.
func (x *Index) Symlink(path string) (Symlink, bool) {
	if i := x.FindSymlink(path); i >= 0 {
		return x.m.Symlinks[i], true
	}
	return Symlink{}, false
}
