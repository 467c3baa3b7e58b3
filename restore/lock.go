package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"backup/eintr"
	"backup/format"
)

// DestLock is an exclusive flock on the destination folder's own descriptor: one restore
// into a folder at a time, whatever path names it (a symlink to it, DEST/., a bind mount),
// so that no restore records another's files as its own in its before-state. Nothing is
// created in DEST for it, and the kernel releases it when the process ends, killed or not.
// The plan reads DEST, and Run writes into it, through this descriptor (Options.Lock): a
// folder renamed away and another made at DEST's path is not the one this restore writes
// into, and another restore may lock that one.
type DestLock struct {
	dest string
	fd   int // DEST's descriptor; -1 when it could not be opened (the plan says why)
	// made lists the folders LockDest made (DEST and the missing folders above it),
	// deepest first: removed again, while empty, when Run never ran.
	made []string
	used atomic.Bool
	// Unlocked is why the file system refused a flock on the folder (EOPNOTSUPP, ENOLCK,
	// EINVAL, EBADF); nil when the lock is held. The restore goes on without it, as before.
	Unlocked error
}

// BusyError is LockDest's error when another process holds DEST's lock.
type BusyError struct{ Dest string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: another restore is writing into it; try again when it ends", format.QuoteName(e.Dest))
}

// flockUnsupported are the errors of a file system that cannot flock a folder.
var flockUnsupported = []error{unix.EOPNOTSUPP, unix.ENOLCK, unix.EINVAL, unix.EBADF}

// LockDest makes dest when missing, opens it as the plan does (a symlink given as dest is
// followed) and takes its flock without waiting: a *BusyError when another process holds
// it. A dest that cannot be made or opened as a folder is not locked and no error: the plan
// or Run fails on it as before, saying why. Release must be called once the restore ends.
func LockDest(dest string) (*DestLock, error) {
	l := &DestLock{dest: dest, fd: -1}
	made, err := mkdirs(dest)
	if err != nil {
		return l, nil
	}
	l.made = made
	fd, err := eintr.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		l.Release()
		return &DestLock{dest: dest, fd: -1}, nil
	}
	l.fd = fd
	err = eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
	case errors.Is(err, unix.EWOULDBLOCK):
		unix.Close(fd) // what it made, if anything, the holder now writes into
		return nil, &BusyError{Dest: dest}
	case isAny(err, flockUnsupported):
		l.Unlocked = err
	default:
		l.Release()
		return nil, fmt.Errorf("%s: cannot lock it: %w", format.QuoteName(dest), err)
	}
	return l, nil
}

func isAny(err error, errs []error) bool {
	for _, e := range errs {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// mkdirs makes dest and the missing folders above it, returning those it made, deepest
// first.
func mkdirs(dest string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(dest); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// dup returns a descriptor of the locked folder of its own (close-on-exec), or -1 when l
// holds none.
func (l *DestLock) dup() (int, error) {
	if l == nil || l.fd < 0 {
		return -1, nil
	}
	return unix.FcntlInt(uintptr(l.fd), unix.F_DUPFD_CLOEXEC, 0)
}

// Release ends the lock. The folders LockDest made are removed again, while empty, when
// no Run wrote into them: a restore refused or failed before writing leaves nothing made.
// They are removed before the lock is given up, DEST only while its path still leads to
// the folder locked.
func (l *DestLock) Release() {
	if l == nil {
		return
	}
	if !l.used.Load() && len(l.made) > 0 && l.stillAtPath() {
		for _, dir := range l.made {
			if unix.Rmdir(dir) != nil {
				break
			}
		}
	}
	l.made = nil
	if l.fd >= 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
}

// errDestMoved is Moved's cause.
var errDestMoved = errors.New("was moved or replaced while the restore held it")

// Moved fails when DEST's path no longer leads to the folder locked (renamed away, another
// made in its place): what reads DEST by its path (the before-state) would read another
// folder than the one the plan read and Run writes into. Nil without a descriptor.
func (l *DestLock) Moved() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	var held, at unix.Stat_t
	if err := unix.Fstat(l.fd, &held); err != nil {
		return fmt.Errorf("%s: %w", format.QuoteName(l.dest), err)
	}
	if err := unix.Stat(l.dest, &at); err != nil || held.Dev != at.Dev || held.Ino != at.Ino {
		return fmt.Errorf("%s %w", format.QuoteName(l.dest), errDestMoved)
	}
	return nil
}

func (l *DestLock) stillAtPath() bool {
	if l.fd < 0 {
		return true // nothing opened: what was made is empty or not ours to remove
	}
	var held, at unix.Stat_t
	if unix.Fstat(l.fd, &held) != nil || unix.Lstat(l.dest, &at) != nil {
		return false
	}
	return held.Dev == at.Dev && held.Ino == at.Ino
}
