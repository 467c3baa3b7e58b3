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
	nextFile, nextDir, nextSymlink atomic.Int32
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

// find returns the position of the first record of name in s, sorted by key; -1 when there
// is none. It tries the record at next first, then searches, and leaves next after the
// record found. A binary search that passed each record by value copied 100-odd bytes per
// comparison: 4% of the CPU time of verifying the bench corpus's archive.
func find[T any](s []T, name string, key func(*T) string, next *atomic.Int32) int {
	first := func(i int) bool { return key(&s[i]) == name && (i == 0 || key(&s[i-1]) != name) }
	i := int(next.Load())
	if i >= len(s) || !first(i) {
		i = sort.Search(len(s), func(i int) bool { return key(&s[i]) >= name })
		if i == len(s) || key(&s[i]) != name {
			return -1
		}
	}
	next.Store(int32(i + 1))
	return i
}

// Manifest is the manifest x indexes, its lists sorted by path.
func (x *Index) Manifest() *Manifest { return x.m }

// FindFile returns the position in Manifest().Files of the record of the file path; -1 when
// there is none.
func (x *Index) FindFile(path string) int {
	return find(x.m.Files, path, func(f *File) string { return f.Path }, &x.nextFile)
}

// FindDir returns the position in Manifest().Dirs of the record of the directory path; -1
// when there is none.
func (x *Index) FindDir(path string) int {
	return find(x.m.Dirs, path, func(d *Dir) string { return d.Path }, &x.nextDir)
}

// FindSymlink returns the position in Manifest().Symlinks of the record of the symlink path;
// -1 when there is none.
func (x *Index) FindSymlink(path string) int {
	return find(x.m.Symlinks, path, func(l *Symlink) string { return l.Path }, &x.nextSymlink)
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
