package restore

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// moveGuard spares destTree its checks of the folders on a path (one fstatat per folder,
// twice per file: most of a restore's system calls) while nothing can have moved them. Every
// folder a restore opens is watched with inotify, the destination first, each before any
// folder inside it is opened, so every link of every chain was made while the folder holding
// it was watched. A folder leaves its name only by a rename or an rmdir in the folder above
// (or a rename over it), which the kernel queues as an event in the very system call that
// does it; so while the queue holds no such event about a folder, every chain is as it was
// opened. The first event about a folder, a queue overflow or a watch that could not be
// set trips the guard for good: the checks are made again, every time, as without it.
//
// A mount over a folder (a user may put a FUSE file system over a folder of their own) moves
// nothing and makes no inotify event, but puts another folder at the name: the mount table
// is watched too (poll on /proc/self/mountinfo), and any change to it trips the guard.
//
// It is trusted only on the destination's own file system, and only on local ones: a change
// another NFS client or a FUSE daemon makes is never reported; and only with procfs at /proc,
// through which each watch is set on the folder open (any other /proc could name another).
type moveGuard struct {
	mu      sync.Mutex
	fd      int // the inotify instance; -1 once tripped
	mounts  int // /proc/self/mountinfo, which polls POLLPRI once a mount came or went
	dev     uint64
	buf     []byte
	tripped bool
	watches map[int]bool // the watches set, by descriptor
	limit   int          // how many watches it may take
}

// watchMask is what a watched folder reports: entries moved or removed, and the folder
// itself moved or removed. A file this restore renames into place is reported too (as a
// move of its temp name) and read past: only events about folders trip the guard.
const watchMask = unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR

// watchShare is the share of the user's inotify watches (fs.inotify.max_user_watches) a
// guard may take, at most maxWatches: the rest stay for others of the same user (systemd,
// as root), whom a restore of a large tree must not leave without. A tree with more folders
// trips the guard.
const (
	watchShare = 8
	maxWatches = 1 << 16
)

// localFS are the file systems on which every change to a folder is made by this kernel,
// which then reports it.
var localFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC: true, unix.F2FS_SUPER_MAGIC: true,
}

// newMoveGuard returns a guard of the destination folder open as root, tripped already when
// inotify is not available or not to be trusted there.
func newMoveGuard(root int) *moveGuard {
	g := &moveGuard{fd: -1, mounts: -1, tripped: true}
	var fs unix.Statfs_t
	var st unix.Stat_t
	if unix.Fstatfs(root, &fs) != nil || !localFS[int64(fs.Type)] || unix.Fstat(root, &st) != nil || !procfs() {
		return g
	}
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return g
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		unix.Close(mounts)
		return g
	}
	g.fd, g.mounts, g.dev, g.tripped, g.buf = fd, mounts, uint64(st.Dev), false, make([]byte, 64<<10)
	g.watches, g.limit = map[int]bool{}, watchLimit()
	g.watch(root, g.dev)
	return g
}

// procfs reports whether /proc/self/fd and /proc/self/mountinfo are procfs's.
func procfs() bool {
	for _, p := range []string{"/proc/self/fd", "/proc/self/mountinfo"} {
		var fs unix.Statfs_t
		if unix.Statfs(p, &fs) != nil || fs.Type != unix.PROC_SUPER_MAGIC {
			return false
		}
	}
	return true
}

// watch watches the folder open as fd (on the device dev), before anything in it is opened.
func (g *moveGuard) watch(fd int, dev uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tripped {
		return
	}
	if dev != g.dev { // a mount inside the destination: maybe not a local one
		g.trip()
		return
	}
	// The descriptor's /proc link names the very folder open, whatever its path is now.
	wd, err := unix.InotifyAddWatch(g.fd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err == nil && !g.watches[wd] && len(g.watches) == g.limit {
		err = unix.ENOSPC
	}
	if err != nil {
		g.trip()
		return
	}
	g.watches[wd] = true // a folder watched again keeps its descriptor
}

// watchLimit is how many watches a guard may take.
func watchLimit() int {
	n := 8192 // the kernel's default before 5.11
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			n = v
		}
	}
	return min(n/watchShare, maxWatches)
}

// quiet reports whether no folder this restore opened can have left its name since it was
// opened: the events queued so far are read, and any about a folder trips the guard.
func (g *moveGuard) quiet() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.tripped && g.mountsChanged() {
		g.trip()
	}
	for !g.tripped {
		n, err := unix.Read(g.fd, g.buf)
		if errors.Is(err, unix.EAGAIN) {
			return true
		}
		if err != nil || !g.onlyFiles(g.buf[:max(n, 0)]) {
			g.trip()
		}
	}
	return false
}

// mountsChanged reports whether a mount came or went since the guard was made (or whether
// that cannot be told).
func (g *moveGuard) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(g.mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n != 0
	}
}

// onlyFiles reports whether the events in b are all about files: a file's temp name moved
// into place, or a file removed.
func (g *moveGuard) onlyFiles(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for len(b) >= unix.SizeofInotifyEvent {
		mask := binary.NativeEndian.Uint32(b[4:8])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:16]))
		if mask&(unix.IN_MOVED_FROM|unix.IN_MOVED_TO|unix.IN_DELETE) == 0 || mask&unix.IN_ISDIR != 0 || size > len(b) {
			return false
		}
		b = b[size:]
	}
	return len(b) == 0
}

// trip gives the guard up for good; g.mu is held.
func (g *moveGuard) trip() {
	g.tripped = true
	for _, fd := range []*int{&g.fd, &g.mounts} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

func (g *moveGuard) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.trip()
}
