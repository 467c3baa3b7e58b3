package restore

import (
	"slices"
	"strings"

	"backup/archive"
	"backup/format"
	"backup/skiprules"
)

// records holds a manifest's records by path, for the plan and Run to look entries up in
// (a file's size, SHA-256 and hard-link group, a symlink's target, what a v2 manifest records
// beside the data): its own lists, sorted in place when they are not (backup writes them
// sorted), searched by binary search, so that a million records are not held a second time
// in maps. The reader sorts and searches the same lists the same way (CheckRecord,
// CopyChecked): where a hostile manifest lists a path twice, both take the first record.
type records struct {
	files    []format.File
	dirs     []format.Dir
	symlinks []format.Symlink
}

func newRecords(m *format.Manifest) *records {
	sortBy(m.Files, func(f format.File) string { return f.Path })
	sortBy(m.Dirs, func(d format.Dir) string { return d.Path })
	sortBy(m.Symlinks, func(l format.Symlink) string { return l.Path })
	return &records{files: m.Files, dirs: m.Dirs, symlinks: m.Symlinks}
}

func sortBy[T any](s []T, key func(T) string) {
	cmp := func(a, b T) int { return strings.Compare(key(a), key(b)) }
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortStableFunc(s, cmp)
	}
}

// find returns the index of the record of name in s, sorted by key; -1 when there is none.
func find[T any](s []T, name string, key func(T) string) int {
	i, ok := slices.BinarySearchFunc(s, name, func(t T, name string) int { return strings.Compare(key(t), name) })
	if !ok {
		return -1
	}
	return i
}

func filePath(f format.File) string       { return f.Path }
func dirPath(d format.Dir) string         { return d.Path }
func symlinkPath(l format.Symlink) string { return l.Path }

// file returns the record of the file name; ok is false when the manifest lists none.
func (x *records) file(name string) (format.File, bool) {
	if i := find(x.files, name, filePath); i >= 0 {
		return x.files[i], true
	}
	return format.File{}, false
}

// symlink returns the record of the symlink name; ok is false when the manifest lists none.
func (x *records) symlink(name string) (format.Symlink, bool) {
	if i := find(x.symlinks, name, symlinkPath); i >= 0 {
		return x.symlinks[i], true
	}
	return format.Symlink{}, false
}

// target is the recorded target of the symlink name; "" when the manifest lists none.
func (x *records) target(name string) string {
	l, _ := x.symlink(name)
	return l.Target
}

// link is the hard-link group of the file name; 0 when the manifest lists none.
func (x *records) link(name string) int {
	f, _ := x.file(name)
	return f.Link
}

// meta returns what the manifest records of the entry e beside its data; nil in a v1
// manifest or when it does not list e.
func (x *records) meta(e *archive.Entry) *format.Meta {
	switch {
	case e.IsDir:
		if i := find(x.dirs, e.Name, dirPath); i >= 0 {
			return &x.dirs[i].Meta
		}
	case e.Kind == "":
		f, _ := x.file(e.Name)
		return f.Meta
	case e.Kind == skiprules.KindSymlink:
		if i := find(x.symlinks, e.Name, symlinkPath); i >= 0 {
			return &x.symlinks[i].Meta
		}
	}
	return nil
}
