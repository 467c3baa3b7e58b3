package archive

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// destTree opens folders below the destination one component at a time, relative to the
// folder above, never following a symlink: whatever changes in the destination while a
// restore runs, nothing is written outside it.
type destTree struct {
	root    int // the destination folder
	cached  string
	cacheFD int // the folder last opened, at cached; -1 when none
	// mkdirMode gives the mode a missing folder is created with.
	mkdirMode func(name string) uint32
	// created records the folders this restore made.
	created map[string]bool
	// journal records the temp names this restore makes; nil when it could not be created.
	journal *journal
}

// errNotBeneath is the cause when a folder on the way is a symlink or not a folder.
var errNotBeneath = errors.New("is a symlink or not a directory")

func openDestTree(dest string, mkdirMode func(string) uint32) (*destTree, error) {
	fd, err := unix.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dest, err)
	}
	return &destTree{root: fd, cacheFD: -1, mkdirMode: mkdirMode, created: map[string]bool{}}, nil
}

func (t *destTree) close() {
	if t.cacheFD >= 0 {
		unix.Close(t.cacheFD)
	}
	unix.Close(t.root)
}

// dir returns a descriptor of the folder name ("" for the destination itself), creating
// missing folders when create is set. The descriptor stays owned by t: it is valid until
// the next call.
func (t *destTree) dir(name string, create bool) (int, error) {
	if name == "" {
		return t.root, nil
	}
	if t.cacheFD >= 0 && name == t.cached {
		return t.cacheFD, nil
	}
	fd, done := t.root, ""
	if t.cacheFD >= 0 && strings.HasPrefix(name, t.cached+"/") {
		fd, done = t.cacheFD, t.cached
	}
	rest := strings.TrimPrefix(name[len(done):], "/")
	for part := range strings.SplitSeq(rest, "/") {
		path := part
		if done != "" {
			path = done + "/" + part
		}
		next, err := t.openChild(fd, path, part, create)
		if fd != t.root && fd != t.cacheFD {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd, done = next, path
	}
	if t.cacheFD >= 0 && t.cacheFD != fd {
		unix.Close(t.cacheFD)
	}
	t.cached, t.cacheFD = name, fd
	return fd, nil
}

func (t *destTree) openChild(parent int, path, part string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(parent, part, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		err = unix.Mkdirat(parent, part, t.mkdirMode(path))
		if err == nil || errors.Is(err, unix.EEXIST) {
			if err == nil {
				t.created[path] = true
			}
			fd, err = unix.Openat(parent, part, flags, 0)
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("%s %w", path, errNotBeneath)
	case err != nil:
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	return fd, nil
}
