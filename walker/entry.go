package walker

import (
	"io/fs"
	"os"
	"path"
	"strconv"
)

// Ops named in the *fs.PathError values the walker reports: the receipt's "op" values, as
// package format spells them (a test of package archive holds them to it).
const (
	OpStat    = "stat"
	OpOpen    = "open"
	OpReadDir = "readdir"
)

// Entry is one path the walk met. It is found, stat'ed and opened relative to the open
// directory it was listed in, never by a path from the root: a directory renamed or swapped
// for a symlink while the walk runs cannot redirect it outside the tree.
type Entry struct {
	// Name is the stored name: the root's name, then the slash-separated path below it.
	Name string
	// Rel is the slash-separated path below the root; "" for the root itself.
	Rel string
	// Info is the lstat result, or the fstat result when lstat failed but the path could be
	// opened. It is nil when neither worked; Err then says why.
	Info fs.FileInfo
	// Err is set when lstat failed. With Info set it is a warning (op "stat", nothing lost
	// yet); without it the path is lost (op "open") or vanished (fs.ErrNotExist).
	Err error
	// RootDev is the device id of the root, for --one-file-system.
	RootDev uint64

	parent *dir    // the directory the entry was listed in, held by the walk during Visit
	base   string  // the entry's name in parent
	self   *subdir // for a directory: its own descriptor, opened when first needed
}

// IsDir reports whether the entry is a directory the walk will descend into.
func (e Entry) IsDir() bool { return e.Info != nil && e.Info.IsDir() }

// Hold returns a Handle that opens the entry later, on any goroutine. Call it during Visit.
func (e Entry) Hold() Handle {
	e.parent.hold()
	return Handle{parent: e.parent, base: e.base}
}

// OpenFile opens the regular file name inside the directory e, relative to e's own
// descriptor, without following a symlink and without opening anything that is not a
// regular file (a FIFO would block, a device may act on being opened). Call it during Visit.
func (e Entry) OpenFile(name string) (*os.File, error) {
	if e.self == nil {
		return nil, &fs.PathError{Op: OpOpen, Path: name, Err: errNotDir}
	}
	d, err := e.self.open(e.parent, e.base, e.Info)
	if err != nil {
		return nil, err
	}
	return d.openRegular(name)
}

// OpenSibling opens the regular file name in the directory the entry was listed in, and
// only a regular file, as OpenFile does. Call it during Visit.
func (e Entry) OpenSibling(name string) (*os.File, error) { return e.parent.openRegular(name) }

// LstatSibling lstats name in the directory the entry was listed in. Call it during Visit.
func (e Entry) LstatSibling(name string) (fs.FileInfo, error) {
	info, err := lstatAt(e.parent.fd, name)
	if err != nil {
		return nil, &fs.PathError{Op: OpStat, Path: name, Err: err}
	}
	return info, nil
}

// childNames is how the names of what a directory holds are made: the stored name is
// path.Join(e.Name, name), which for a name read from a directory (no slash, never . or
// ..) is prefix+name, and Rel is the same string from relAt on when the stored name ends
// with it (one string per entry instead of two; path.Join itself was 6% of the walk's time
// in an unchanged set run of the bench corpus).
type childNames struct {
	prefix string
	relAt  int // -1: Rel is made on its own
}

func (e Entry) childNames() childNames {
	p := path.Join(e.Name, "x")
	k := childNames{prefix: p[:len(p)-1]}
	rel := ""
	if e.Rel != "" {
		rel = e.Rel + "/"
	}
	k.relAt = len(k.prefix) - len(rel)
	if k.relAt < 0 || k.prefix[k.relAt:] != rel {
		k.relAt = -1
	}
	return k
}

// stored is the stored name of the child name.
func (k childNames) stored(name string) string { return k.prefix + name }

func (k childNames) child(e Entry, d *dir, name string) Entry {
	stored := k.stored(name)
	rel := ""
	switch {
	case k.relAt >= 0:
		rel = stored[k.relAt:]
	case e.Rel == "":
		rel = name
	default:
		rel = e.Rel + "/" + name
	}
	return Entry{Name: stored, Rel: rel, RootDev: e.RootDev, parent: d, base: name}
}

// Handle opens one entry of the walk after Visit has returned, on any goroutine: it keeps the
// directory the entry was listed in open until Release, which must be called once.
type Handle struct {
	parent *dir
	base   string
}

// Open opens the entry for reading relative to its directory, without following a symlink
// and without blocking on a FIFO or a device: the way every file that may have been swapped
// since its stat must be opened. The caller checks what it opened with fstat.
func (h Handle) Open() (*os.File, error) { return h.parent.openFile(h.base) }

// Dir returns a path of the entry's directory that resolves through the descriptor the walk
// holds (/proc/self/fd/N), for a library that opens files only by path: a directory renamed
// or swapped since the walk opened it cannot redirect it. Only the directory is pinned so:
// what the caller opens in it by Name, it checks is what Open would have opened.
func (h Handle) Dir() string { return "/proc/self/fd/" + strconv.Itoa(h.parent.fd) }

// Name returns the entry's name in its directory.
func (h Handle) Name() string { return h.base }

// Lstat stats the entry again, relative to its directory, without following a symlink.
func (h Handle) Lstat() (fs.FileInfo, error) { return lstatAt(h.parent.fd, h.base) }

// Release lets the entry's directory be closed once nothing else needs it.
func (h Handle) Release() { h.parent.release() }
