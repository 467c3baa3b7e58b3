package backupset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// LockedError is returned by Acquire when another process holds the set's lock. Pid is the
// holder's process id: for a folder, the one the kernel lists as holding the flock (see
// lockHolder); for a bucket, the one its lock object names; 0 when it is not known.
type LockedError struct {
	Dir string // the set's location
	Pid int
	// Host is the holder's host name, when the lock says it (a lock object in a bucket
	// shared by several hosts); "" for a folder's lock.
	Host string
}

func (e *LockedError) Error() string {
	switch {
	case e.Pid == 0:
		return "another backup of this set is running"
	case e.Host != "":
		return fmt.Sprintf("another backup of this set is running, pid %d on %s", e.Pid, e.Host)
	}
	return fmt.Sprintf("another backup of this set is running, pid %d", e.Pid)
}

// Lock is a held exclusive lock on a set. The operations that change a set hang off it, so
// that none can run without the lock.
type Lock struct {
	store Store
	held  Held
	// pointerETag is LATEST's ETag when Pointer read it ("" when there was none): the
	// condition on which Activate replaces it.
	pointerETag string
	pointerRead bool
	// pointerName and pointerErr are what Pointer read (readPointer's answer), which
	// Witness goes by rather than reading LATEST again.
	pointerName string
	pointerErr  error
	// mixed lets an encrypted archive into a plain set and the reverse (AllowMixed).
	mixed bool
}

// AllowMixed makes the lock's checks (Activate, Adopt) take an archive of the other kind than
// the set's, encrypted into a plain set or plain into an encrypted one, as create
// --allow-plaintext asks; they refuse one otherwise.
func (l *Lock) AllowMixed() { l.mixed = true }

// Acquire takes the writer lock of the set in st, waiting up to wait (see Store.Lock).
func Acquire(ctx context.Context, st Store, wait time.Duration) (*Lock, error) {
	h, err := st.Lock(ctx, wait)
	if err != nil {
		return nil, err
	}
	return &Lock{store: st, held: h}, nil
}

// AcquireForDryRun is Acquire for a dry run, which writes nothing: a set its user may read
// but not write, or one on a read-only mount, is read without the lock, which such a user
// cannot take; so is a folder without a lock file, which taking the lock would create (a
// mistyped DIR would become a set to backup sets), and which no run holds. The plan may then
// race a writer's run, as a dry run may.
func AcquireForDryRun(ctx context.Context, st Store, wait time.Duration) (*Lock, error) {
	if f, ok := st.(Folder); ok {
		if _, err := os.Lstat(filepath.Join(f.Dir, LockName)); errors.Is(err, fs.ErrNotExist) {
			return &Lock{store: st, held: unlocked{}}, nil
		}
	}
	l, err := Acquire(ctx, st, wait)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return &Lock{store: st, held: unlocked{}}, nil
	}
	return l, err
}

// unlocked is the Held of a dry run that could not take the lock.
type unlocked struct{}

func (unlocked) Release() error { return nil }

// Store returns the locked set's store.
func (l *Lock) Store() Store { return l.store }

// Release gives the lock up.
func (l *Lock) Release() error { return l.held.Release() }

// flock is a held flock on a folder's lock file.
type flock struct {
	file *os.File
	// own says the lock file is the set's alone (one link), so the pid may be written into
	// it: a file with other names (planted, or a `cp -al` snapshot's) is written in place
	// by no one.
	own bool
	// guard keeps the lock's name on a file this run holds (see guard); nil when the folder
	// cannot be watched.
	guard *guard
}

// pollInterval is how often Acquire retries a held lock while it waits.
const pollInterval = 100 * time.Millisecond

// Lock takes the exclusive flock on DIR/.backup.lock, creating the file (mode 0600) when
// missing. When the lock is held elsewhere it returns a *LockedError at once, or, when wait is
// positive, retries until wait has passed or ctx is done. The kernel releases the lock when
// the process dies, so a crashed run never leaves the set locked; the file itself is harmless.
//
// A flock belongs to the file, not to its name: once it holds one, Lock checks that the name
// still leads to the file it locked, and otherwise (the file was removed or replaced while
// it waited) locks the file the name leads to now.
func (fo Folder) Lock(ctx context.Context, wait time.Duration) (Held, error) {
	path := filepath.Join(fo.Dir, LockName)
	deadline := time.Now().Add(wait)
	for tries := 1; ; tries++ {
		f, err := flockFile(ctx, fo.Dir, path, deadline)
		if err != nil {
			return nil, err
		}
		if stillAt(f, path) {
			own := linkCount(f) == 1
			if own {
				writePid(f)
			}
			return &flock{file: f, own: own, guard: startGuard(path, f)}, nil
		}
		f.Close()
		if tries == maxRelock {
			return nil, &fs.PathError{Op: "lock", Path: path, Err: errors.New("was replaced each time it was locked")}
		}
	}
}

// maxRelock bounds how often Lock locks a lock file that another name took the place of.
const maxRelock = 10

// flockFile opens the lock file at path and takes its flock, waiting until deadline.
func flockFile(ctx context.Context, dir, path string, deadline time.Time) (*os.File, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	for {
		err = eintr.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		if !time.Now().Before(deadline) {
			pid := lockHolder(f)
			f.Close()
			return nil, &LockedError{Dir: dir, Pid: pid}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(min(pollInterval, time.Until(deadline))):
		}
	}
}

// stillAt says whether path names the open file f (same device and inode).
func stillAt(f *os.File, path string) bool {
	var held, named unix.Stat_t
	if eintr.Fstat(int(f.Fd()), &held) != nil || eintr.Lstat(path, &named) != nil {
		return false
	}
	return held.Dev == named.Dev && held.Ino == named.Ino
}

// linkCount returns how many names the open file has; 0 when it cannot be told.
func linkCount(f *os.File) uint64 {
	var st unix.Stat_t
	if eintr.Fstat(int(f.Fd()), &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}

// openLockFile opens the lock file without following a symlink and without blocking on a
// FIFO, and refuses anything but a regular file: a lock that is a link could be made to
// point anywhere.
//
// flock needs no write access, so whoever can open the file can hold the lock, and stop
// every backup of the set. So the file belongs to those who may write the set's folder: it
// is given the folder's owner (by root) and group, and lockMode. One that cannot be opened
// for writing (another user's, or an older version's 0644) is opened to read only by a user
// who may write the folder; any other user is refused. A lock file with other names is
// changed by no one.
func openLockFile(path string) (*os.File, error) {
	const flags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o600)
	if errors.Is(err, fs.ErrPermission) && eintr.Faccessat(unix.AT_FDCWD, filepath.Dir(path), unix.W_OK, unix.AT_EACCESS) == nil {
		f, err = os.OpenFile(path, os.O_RDONLY|flags, 0)
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "lock", Path: path, Err: errors.New("is a symlink")}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lock", Path: path, Err: errors.Unwrap(err)}
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "lock", Path: path, Err: errors.New("is not a regular file")}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if dir, err := os.Stat(filepath.Dir(path)); err == nil && linkCount(f) == 1 && holdsLockOnly(f, info) {
		fitLockFile(f, info, dir)
	}
	return f, nil
}

// holdsLockOnly says whether f (whose fstat is info) holds what a lock file holds: nothing,
// or a holder's pid. Anything else is a file put at the lock's name by whoever may write
// the folder (a file of root's moved there from a folder that user may write): it is locked
// as it is, and never given to the folder's owner, who would then read it.
func holdsLockOnly(f *os.File, info fs.FileInfo) bool {
	return info.Size() == 0 || info.Size() <= maxLockSize && readPid(f) != 0
}

// maxLockSize is the most a lock file holding a pid line may hold.
const maxLockSize = 32

// fitLockFile gives the lock file f (whose fstat is info) the owner and group of the set's
// folder dir and lockMode, as far as this process may: root gives both, the file's owner
// its group (a group of the folder's that the owner is in, as in a folder shared by a group
// without the setgid bit) and mode. A file it cannot change is still locked.
func fitLockFile(f *os.File, info, dir fs.FileInfo) {
	st, ok1 := info.Sys().(*syscall.Stat_t)
	ds, ok2 := dir.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return
	}
	uid := -1
	if os.Geteuid() == 0 && st.Uid != ds.Uid {
		uid = int(ds.Uid)
	}
	if uid != -1 || st.Gid != ds.Gid {
		f.Chown(uid, int(ds.Gid))
	}
	if mode := lockMode(dir.Mode().Perm()); mode != info.Mode().Perm() {
		f.Chmod(mode)
	}
}

// lockMode is the lock file's mode in a folder of mode dir: read and write for the owner,
// and for the group and others each when they may write the folder (and so the set).
func lockMode(dir fs.FileMode) fs.FileMode {
	mode := fs.FileMode(0o600)
	if dir&0o020 != 0 {
		mode |= 0o060
	}
	if dir&0o002 != 0 {
		mode |= 0o006
	}
	return mode
}

// writePid records the holder's pid, for the message a second run prints. It is a hint
// only, so a failure to write it is ignored.
func writePid(f *os.File) {
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// pidGrace is how long a run that finds the set locked waits for the holder's pid: the holder
// writes it just after taking the lock, so a run that comes in between would find none.
const pidGrace = 200 * time.Millisecond

func awaitPid(f *os.File) int {
	for deadline := time.Now().Add(pidGrace); ; time.Sleep(10 * time.Millisecond) {
		if pid := readPid(f); pid != 0 || time.Now().After(deadline) {
			return pid
		}
	}
}

func readPid(f *os.File) int {
	buf := make([]byte, maxLockSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}

// Release gives the flock up. The lock file stays: removing it would let a third run lock a
// new file while a second one still waits on the old one.
// The pid is cleared first, so that a run that finds the lock taken by a newer holder that has
// not written its pid yet does not name this process.
//
// It returns an error when the lock file was replaced while the run held it and another
// process locked the new one (see guard): the set may not have been this run's alone.
func (l *flock) Release() error {
	var lost error
	if l.guard != nil {
		var more []*os.File
		more, lost = l.guard.stop()
		for _, f := range more[1:] {
			if linkCount(f) == 1 {
				f.Truncate(0)
			}
			f.Close()
		}
	}
	if l.own {
		l.file.Truncate(0)
	}
	if err := l.file.Close(); err != nil {
		return err
	}
	return lost
}
