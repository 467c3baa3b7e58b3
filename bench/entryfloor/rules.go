package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"github.com/klauspost/compress/flate"
	"golang.org/x/sys/unix"
)

// rules holds what restore-rules keeps for the whole tree: each folder's descriptor, and
// the two descriptors one poll of which tells whether any folder moved.
type rules struct {
	fds   map[string]int // by the folder's name below the tree, "." for the root
	guard []unix.PollFd  // the inotify instance, then /proc/self/mountinfo
}

// watchMask is the move guard's (restore/moveguard.go).
const watchMask = unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR

func newRules(root int) (*rules, error) {
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		unix.Close(mounts)
		return nil, err
	}
	r := &rules{fds: map[string]int{}, guard: []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}, {Fd: int32(mounts), Events: unix.POLLPRI}}}
	if err := r.keep(".", root); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// errMoved is the cause when the watches hold an event: a folder moved, or the mount table
// changed.
var errMoved = errors.New("a folder moved, or a mount came or went")

// poll is unix.Poll; a test makes it fail as a signal does.
var poll = unix.Poll

// quiet says whether the watches hold no event, with one poll that does not wait, tried
// again when a signal cut it short: the Go runtime preempts with signals, and the floor
// must not stop for one where restore's guard (restore/moveguard.go) goes on.
func (r *rules) quiet() error {
	for {
		// Poll writes the events it finds into the set: it gets a copy.
		n, err := poll(slices.Clone(r.guard), 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("%w (%v)", errMoved, err)
		case n != 0:
			return errMoved
		}
		return nil
	}
}

func (r *rules) close() {
	if r == nil {
		return
	}
	for name, fd := range r.fds {
		if name != "." { // the tree's root file closes that one
			unix.Close(fd)
		}
	}
	for _, p := range r.guard {
		unix.Close(int(p.Fd))
	}
}

// keep holds the folder open as fd, watched, for the files made in it.
func (r *rules) keep(name string, fd int) error {
	if _, err := unix.InotifyAddWatch(int(r.guard[0].Fd), "/proc/self/fd/"+strconv.Itoa(fd), watchMask); err != nil {
		return fmt.Errorf("watch %s: %w", name, err)
	}
	r.fds[name] = fd
	return nil
}

// mkdir makes the folder name in its parent's descriptor, which must be open, and opens it
// without following a link.
func (r *rules) mkdir(name string) error {
	parent, base := r.fds[filepath.Dir(name)], filepath.Base(name)
	if err := unix.Mkdirat(parent, base, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("mkdir %s: %w", name, err)
	}
	fd, err := unix.Openat(parent, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	return r.keep(name, fd)
}

// folder is the descriptor of name's folder, which mkdir opened.
func (t *tree) folder(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules.fds[filepath.Dir(name)]
}

// createUnnamed makes the file name as an unnamed file in its folder.
func (t *tree) createUnnamed(name string, e *zip.File) (*os.File, error) {
	fd, err := unix.Openat(t.folder(name), ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, uint32(e.Mode().Perm()))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// link sets the modification time of the unnamed file f through its descriptor and, once the
// watches say no folder moved, links it to its name and closes it.
func (t *tree) link(f *os.File, name string, e *zip.File) error {
	defer f.Close()
	fd := int(f.Fd())
	ts := unix.NsecToTimespec(e.Modified.UnixNano())
	times := [2]unix.Timespec{ts, ts}
	if _, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&times[0])), 0, 0, 0); errno != 0 {
		return fmt.Errorf("set mtime of %s: %w", name, errno)
	}
	if err := t.rules.quiet(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dfd, base := t.folder(name), filepath.Base(name)
	err := unix.Linkat(fd, "", dfd, base, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOENT) { // a kernel before 6.10, and a user without CAP_DAC_READ_SEARCH
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dfd, base, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return fmt.Errorf("link %s: %w", name, err)
	}
	return nil
}

// primer is the deflate stream archive/reader.go's forget decodes before each entry: a
// dynamic block with a literal, a match and the end of the block ("aaaa").
var primer = []byte{0x0d, 0xc0, 0x01, 0x09, 0x00, 0x00, 0x00, 0x80, 0xa0, 0xad, 0xfe, 0x3f, 0x51, 0x5a}

// forget decodes primer, so that r's decoder holds no table of the entry read before.
func (r *entryReader) forget() error {
	r.src.Reset(bytes.NewReader(primer))
	r.fr.(flate.Resetter).Reset(r.src, nil)
	if n, err := io.Copy(io.Discard, r.fr); n != 4 || err != nil {
		return fmt.Errorf("the primer decodes to %d bytes, %v", n, err)
	}
	return nil
}
