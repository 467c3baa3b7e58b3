package backupset

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// guard keeps the name .backup.lock on a file this run holds locked while it holds the
// set. A flock belongs to a file, not to its name: a lock file removed or replaced while a
// run holds it (an rsync of the folder, a script that cleans "stale" lock files) would let
// the next run create a new one, lock it, and run beside this one. The guard watches the
// folder (inotify) and, as soon as the name no longer leads to a locked file of this run,
// creates (or takes) the file there and locks it too, so that the next run finds it locked.
// The window it leaves is the time between the removal and the guard's reaction, a
// fraction of a millisecond, against the tens a new run takes to start.
type guard struct {
	path   string
	events *os.File // the inotify descriptor, non-blocking, so that Close stops the reader
	done   chan struct{}

	mu    sync.Mutex
	files []*os.File // every lock file this run holds, the first the one Lock took
	lost  error      // why another process may hold the set too
}

// startGuard starts the guard of the lock file at path, which f is and holds locked; nil
// when the folder cannot be watched (the lock then works as a bare flock).
func startGuard(path string, f *os.File) *guard {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	const mask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), mask); err != nil {
		unix.Close(fd)
		return nil
	}
	g := &guard{path: path, events: os.NewFile(uintptr(fd), "inotify"), done: make(chan struct{}), files: []*os.File{f}}
	go g.watch()
	// The name may have changed between the lock and the watch.
	g.check()
	return g
}

// watch reads the folder's events until Close, and checks the name after each that may have
// changed it.
func (g *guard) watch() {
	defer close(g.done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.PathMax))
	for {
		n, err := g.events.Read(buf)
		if err != nil {
			return
		}
		if touchesLock(buf[:n]) {
			g.check()
		}
	}
}

// touchesLock says whether the events in buf may have changed what the lock's name leads to.
func touchesLock(buf []byte) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 || string(name) == LockName {
			return true
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	return false
}

// check makes the lock's name lead to a file this run holds locked: unless it does, it
// creates the file (or opens the one there) and locks it. A file there that another
// process holds locked means another run may be in the set: that is recorded as lost.
func (g *guard) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost != nil {
		return
	}
	for _, f := range g.files {
		if stillAt(f, g.path) {
			return
		}
	}
	f, err := openLockFile(g.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) { // the folder itself is gone: nothing to keep
			g.lost = err
		}
		return
	}
	// stillAt says no also when the name cannot be looked up (EIO): the file opened there
	// may be one this run holds, whose flock the new descriptor would find taken.
	if g.holds(f) {
		f.Close()
		return
	}
	if err := eintr.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		g.lost = &fs.PathError{Op: "lock", Path: g.path, Err: errors.New("was replaced while this run held the set, and another process locked the new file")}
		return
	}
	if linkCount(f) == 1 {
		writePid(f)
	}
	g.files = append(g.files, f)
}

// holds says whether f is one of the lock files this run holds (same device and inode).
func (g *guard) holds(f *os.File) bool {
	var opened, held unix.Stat_t
	if eintr.Fstat(int(f.Fd()), &opened) != nil {
		return false
	}
	for _, h := range g.files {
		if eintr.Fstat(int(h.Fd()), &held) == nil && held.Dev == opened.Dev && held.Ino == opened.Ino {
			return true
		}
	}
	return false
}

// stop ends the watch and returns the lock files, for Release to close, and why the set
// may not have been this run's alone.
func (g *guard) stop() ([]*os.File, error) {
	g.events.Close()
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.files, g.lost
}
