package walker

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// errReplaced is the cause when a directory is no longer the one its stat saw: swapped for a
// symlink, a file or another directory while the walk ran. Its contents are not read.
var errReplaced = errors.New("replaced while the walk read it (swapped for a symlink, a file or another directory)")

// errNotDir and ErrNotRegular are the causes when OpenFile is asked for what it cannot open.
var (
	errNotDir     = errors.New("not a directory")
	ErrNotRegular = errors.New("not a regular file")
)

const (
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
)

// dir is an open directory of the walk. Everything below it is stat'ed and opened relative
// to it, so it stays open while the walk is inside it and while a Handle of one of its
// entries may still open it; the last reference closes it. So at most the directories on the
// walk's current path, and those of the files queued for reading, are open at once.
type dir struct {
	f    *os.File // owns fd; nil for the root's parent, opened with O_PATH
	fd   int
	refs atomic.Int32
}

func newDir(fd int, f *os.File) *dir {
	d := &dir{f: f, fd: fd}
	d.refs.Store(1)
	return d
}

func (d *dir) hold() { d.refs.Add(1) }

func (d *dir) release() {
	if d.refs.Add(-1) != 0 {
		return
	}
	if d.f != nil {
		d.f.Close()
	} else {
		unix.Close(d.fd)
	}
}

// openRoot resolves root once, following its symlinks (the user named it; the last one only
// when follow is set), and opens the folder holding it. It returns that folder and the
// root's name in it: the root is then stat'ed and opened relative to it like any entry.
func openRoot(root string, follow bool) (*dir, string, error) {
	resolved, err := resolveRoot(root, follow)
	if err != nil {
		return nil, "", err
	}
	parent, base := filepath.Dir(resolved), filepath.Base(resolved)
	if parent == resolved { // "/": it is its own parent
		base = "."
	}
	// O_PATH: the folder above the root need only be searchable, as for a path lookup.
	fd, err := eintr.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", &fs.PathError{Op: "open", Path: parent, Err: err}
	}
	return newDir(fd, nil), base, nil
}

func resolveRoot(root string, follow bool) (string, error) {
	base := filepath.Base(root)
	if follow || base == "." || base == ".." || base == string(filepath.Separator) {
		return filepath.EvalSymlinks(root)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(root))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, base), nil
}

// openDir opens the directory name in d, which lstat described as info. A directory that
// is now a symlink, not a directory, or another directory than info describes gives
// errReplaced.
func (d *dir) openDir(name string, info fs.FileInfo) (*dir, error) {
	fd, err := eintr.Openat(d.fd, name, dirFlags, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil, errReplaced
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	got, err := f.Stat()
	if err == nil && !sameFile(got, info) {
		err = errReplaced
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return newDir(fd, f), nil
}

// openFile opens name in d without following a symlink or blocking.
func (d *dir) openFile(name string) (*os.File, error) {
	fd, err := d.openFD(name)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (d *dir) openFD(name string) (int, error) {
	fd, err := eintr.Openat(d.fd, name, fileFlags, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return fd, nil
}

// openRegular opens name in d when it is a regular file, and only then: lstat first, so
// that nothing else is ever opened, then fstat, so that what was opened is what lstat saw.
func (d *dir) openRegular(name string) (*os.File, error) {
	before, err := lstatAt(d.fd, name)
	if err != nil {
		return nil, &fs.PathError{Op: OpStat, Path: name, Err: err}
	}
	if !before.Mode().IsRegular() {
		return nil, &fs.PathError{Op: OpOpen, Path: name, Err: ErrNotRegular}
	}
	f, err := d.openFile(name)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err == nil && (!after.Mode().IsRegular() || !sameFile(before, after)) {
		err = &fs.PathError{Op: OpOpen, Path: name, Err: errReplaced}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readNames lists d, sorted, each name once, in batches that list reads (nil:
// (*os.File).Readdirnames). On an error it returns the names listed before it.
func (d *dir) readNames(list func(f *os.File, n int) ([]string, error)) ([]string, error) {
	if list == nil {
		list = (*os.File).Readdirnames
	}
	var names []string
	for {
		batch, err := list(d.f, 1024)
		names = append(names, batch...)
		if err == io.EOF {
			return sortedOnce(names), nil
		}
		if err != nil {
			return sortedOnce(names), err
		}
	}
}

// sortedOnce sorts names and drops repeats: a name deleted and made again while its
// directory is listed may be listed twice (ext4 without dir_index, btrfs), and the archive
// takes each name once. The walk stats it once, as the file it is now.
func sortedOnce(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// subdir is a directory entry's own descriptor, opened on first use: by OpenFile while a rule
// looks inside it, or by the walk when it descends. A directory the rules exclude is never
// opened (an automount point, a hung network mount). Only the walk's goroutine uses it.
type subdir struct {
	d      *dir
	err    error
	opened bool
}

func (s *subdir) open(parent *dir, name string, info fs.FileInfo) (*dir, error) {
	if !s.opened {
		s.opened = true
		s.d, s.err = parent.openDir(name, info)
	}
	return s.d, s.err
}

// close drops the walk's reference; Handles of the entries in it keep it open.
func (s *subdir) close() {
	if s.d != nil {
		s.d.release()
	}
}
