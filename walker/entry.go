package walker

import (
	"io/fs"
	"os"
	"path"
	"syscall"
)

// Ops named in the *fs.PathError values the walker reports. They are the receipt's "op" values.
const (
	OpStat    = "stat"
	OpOpen    = "open"
	OpReadDir = "readdir"
)

// Entry is one path the walk met.
type Entry struct {
	// Path is the path on disk.
	Path string
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
}

// IsDir reports whether the entry is a directory the walk will descend into.
func (e Entry) IsDir() bool { return e.Info != nil && e.Info.IsDir() }

func (e Entry) child(name string) Entry {
	rel := name
	if e.Rel != "" {
		rel = e.Rel + "/" + name
	}
	return Entry{
		Path:    e.Path + string(os.PathSeparator) + name,
		Name:    path.Join(e.Name, name),
		Rel:     rel,
		RootDev: e.RootDev,
	}
}

// Open opens path for reading without following a final symlink and without blocking on a
// FIFO or a device: the way every file that may have been swapped since lstat must be opened.
func Open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func deviceOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}
