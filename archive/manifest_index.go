package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"backup/format"
	"backup/skiprules"
)

// manifestIndex holds a manifest's records by path, for verify to look entries up in: its
// own lists, sorted, searched by binary search, so that a million records are not held a
// second time in maps. Verify marks each record it meets in the archive as seen.
type manifestIndex struct {
	v2       bool
	files    []format.File
	dirs     []format.Dir
	symlinks []format.Symlink

	seenFiles, seenDirs, seenSymlinks []bool
}

// newManifestIndex indexes m's lists, sorting them in place when they are not sorted
// (backup writes them sorted).
func newManifestIndex(m *format.Manifest) *manifestIndex {
	sortBy(m.Files, func(f format.File) string { return f.Path })
	sortBy(m.Dirs, func(d format.Dir) string { return d.Path })
	sortBy(m.Symlinks, func(l format.Symlink) string { return l.Path })
	return &manifestIndex{v2: m.Schema != format.ManifestSchemaV1, files: m.Files, dirs: m.Dirs, symlinks: m.Symlinks,
		seenFiles: make([]bool, len(m.Files)), seenDirs: make([]bool, len(m.Dirs)), seenSymlinks: make([]bool, len(m.Symlinks))}
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
func (x *manifestIndex) file(name string) (format.File, bool) {
	if i := find(x.files, name, filePath); i >= 0 {
		return x.files[i], true
	}
	return format.File{}, false
}

// meta returns what the manifest records of the entry e beside its data; nil in a v1
// manifest or when it does not list e.
func (x *manifestIndex) meta(e *Entry) *format.Meta {
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

// targetSum is the SHA-256 the data of a symlink entry must have: its recorded target's.
func targetSum(target string) string {
	sum := sha256.Sum256([]byte(target))
	return hex.EncodeToString(sum[:])
}

// compareOwner says what is wrong when the owner e's ux field holds is not the one the
// manifest records: both are written from the same lstat, so a difference is damage.
func compareOwner(e *Entry, m *format.Meta) *Problem {
	switch {
	case m == nil:
		return nil
	case !e.HasOwner:
		return &Problem{Entry: e.StoredName(), Reason: "no owner field, the manifest records one"}
	case e.UID != m.UID || e.GID != m.GID:
		return &Problem{Entry: e.StoredName(), Reason: fmt.Sprintf("owner %d:%d, the manifest says %d:%d", e.UID, e.GID, m.UID, m.GID)}
	}
	return nil
}
