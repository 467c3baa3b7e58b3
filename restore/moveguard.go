package restore

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// moveGuard spares destTree its checks of the folders on a path (one fstatat per folder,
// twice per file: most of a restore's system calls) while nothing can have moved them. Every
// folder a restore opens is watched with inotify for moves of itself, the destination first,
// each as soon as it is open. A folder leaves its name by a rename of itself (or of a folder
// above it, watched too), which the kernel queues as an event in the very system call that
// does it; so while the queue is empty, every chain is as it was opened. What a restore does
// itself (files made, renamed into place, given their metadata) moves no folder and queues
// nothing. A folder removed, or renamed over, while open queues nothing until its last
// descriptor closes, but is dead: nothing can be made in it, and destTree.check finds its
// link count 0 before a rename.
//
// A mount over a folder (a user may put a FUSE file system over a folder of their own) moves
// nothing and makes no inotify event, but puts another folder at the name: the mount table
// is watched too (/proc/self/mountinfo polls POLLPRI once a mount came or went), and the
// changes are counted. A chain checked whole since the last change is as it was checked; one
// older is checked whole again, once: mounts come and go all over a busy machine (containers,
// automounts), and tripping on each made a restore N folders deep take N squared checks.
//
// One poll of both, with no wait, is the whole check. The first inotify event, or a watch that
// could not be set, trips the guard for good: the checks are made again, every time, as without
// it. It is trusted only on the destination's own file system, and only on
// local ones (a change another NFS client or a FUSE daemon makes is never reported), and only
// with procfs at /proc, through which each watch is set on the folder open (any other /proc
// could name another).
type moveGuard struct {
	poll    []unix.PollFd // the inotify instance, then /proc/self/mountinfo; nil when none
	tripped atomic.Bool
	dev     uint64

	// mu guards watches and mounts, and makes each poll and what it finds one step: mountinfo
	// tells a change of mounts to one poll only, and another worker must not find the guard
	// quiet before that one has counted it.
	mu      sync.Mutex
	watches map[int]bool // the watches set, by descriptor
	limit   int          // how many watches it may take
	mounts  uint64       // the changes of mounts seen so far
}

// watchMask: the folder itself moved, or removed (reported once its last descriptor closes).
const watchMask = unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR

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
	g := &moveGuard{}
	g.tripped.Store(true)
	var fs unix.Statfs_t
	var st unix.Stat_t
	if eintr.Fstatfs(root, &fs) != nil || !localFS[int64(fs.Type)] || eintr.Fstat(root, &st) != nil || !procfs() {
		return g
	}
	mounts, err := eintr.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return g
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		unix.Close(mounts)
		return g
	}
	g.poll = []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(mounts), Events: unix.POLLPRI}}
	g.dev, g.watches, g.limit = uint64(st.Dev), map[int]bool{}, watchLimit()
	g.tripped.Store(false)
	g.watch(root, g.dev)
	return g
}

// procfs reports whether /proc/self/fd and /proc/self/mountinfo are procfs's.
func procfs() bool {
	for _, p := range []string{"/proc/self/fd", "/proc/self/mountinfo"} {
		var fs unix.Statfs_t
		if eintr.Statfs(p, &fs) != nil || fs.Type != unix.PROC_SUPER_MAGIC {
			return false
		}
	}
	return true
}

// watch watches the folder open as fd (on the device dev), before anything in it is opened.
func (g *moveGuard) watch(fd int, dev uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tripped.Load() {
		return
	}
	if dev != g.dev { // a mount inside the destination: maybe not a local one
		g.tripped.Store(true)
		return
	}
	// The descriptor's /proc link names the very folder open, whatever its path is now.
	wd, err := unix.InotifyAddWatch(int(g.poll[0].Fd), "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err != nil || !g.watches[wd] && len(g.watches) == g.limit {
		g.tripped.Store(true) // out of watches, say
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
// opened, but for a change of mounts, and how many changes of mounts came so far: a folder
// checked before the last of them must be checked again. Its descriptors stay open until
// close.
func (g *moveGuard) quiet() (mounts uint64, ok bool) {
	if g.tripped.Load() {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tripped.Load() {
		return 0, false
	}
	fds := []unix.PollFd{g.poll[0], g.poll[1]}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || fds[0].Revents != 0 || fds[1].Revents&^(unix.POLLPRI|unix.POLLERR) != 0 {
			g.tripped.Store(true)
			return 0, false
		}
		if n != 0 {
			g.mounts++
		}
		return g.mounts, true
	}
}

// close trips the guard and gives its watches back; call it once no worker asks.
func (g *moveGuard) close() {
	g.tripped.Store(true)
	for _, p := range g.poll {
		unix.Close(int(p.Fd))
	}
	g.poll = nil
}
