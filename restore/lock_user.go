package restore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// userLock is a restore's second lock on DEST, one no reader can hold or void: a flock on
// a file named after DEST's device and inode in a folder only the restoring user may write
// (root's /run/backup, another user's $XDG_RUNTIME_DIR/backup). DEST's own flock keeps
// apart restores by different users, but anyone who may read DEST may hold it, and such a
// lock is ignored (readerHolds); this one still keeps apart the same user's restores then.
type userLock struct {
	dir  int    // the folder's descriptor
	path string // the folder's path, for messages
	name string
	fd   int
}

// userLockDir is the folder of the restoring user's locks, "" for a user who has none.
var userLockDir = func() string {
	if os.Geteuid() == 0 {
		return "/run/backup"
	}
	if run := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
		return filepath.Join(run, "backup")
	}
	return ""
}

// errUserLockBusy is lockUser's error when another restore by this user holds the lock.
var errUserLockBusy = errors.New("held")

// folderBusyError is lockUser's errUserLockBusy when the folder of locks, in which a lock
// file could not be made, is held alone (holdFolder): the other restore may write into
// another DEST.
type folderBusyError struct{ dir string }

func (e *folderBusyError) Error() string { return e.dir + ": held alone" }
func (e *folderBusyError) Unwrap() error { return errUserLockBusy }

// lockUser takes the user's lock on the folder st describes, without waiting. Nil and no
// error when the user has no folder for locks that is his alone (missing and cannot be
// made, or another may open it): DEST's own flock is then the only one, as before.
//
// Every restore holds the folder itself shared while it holds its file; one that cannot
// have its file (a full file system: anyone may fill root's /run through /run/lock on many
// systems) holds the folder alone instead, so that a full folder does not leave two of the
// user's restores into one DEST unlocked. That one refuses, and is refused by, the user's
// restores into other folders while it runs: only while the file system is full.
func lockUser(st *unix.Stat_t) (*userLock, error) {
	path := userLockDir()
	dir := openUserLockDir(path)
	if dir < 0 {
		return nil, nil
	}
	l := &userLock{dir: dir, path: path, name: fmt.Sprintf("restore-%d-%d.lock", st.Dev, st.Ino), fd: -1}
	if err := eintr.Flock(dir, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		unix.Close(dir)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &folderBusyError{dir: path}
		}
		return nil, nil
	}
	// A lock file is removed by the restore that held it as it ends; one opened just
	// before that removal is locked in vain, so the name is checked to lead to the file
	// locked, and opened again when it does not.
	for range 16 {
		fd, err := eintr.Openat(dir, l.name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			break
		}
		if err := eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			unix.Close(fd)
			unix.Close(dir)
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, errUserLockBusy
			}
			return nil, nil
		}
		if l.lockNamed(fd) {
			l.fd = fd
			return l, nil
		}
		unix.Close(fd)
	}
	return l.holdFolder()
}

// holdFolder takes the folder of locks alone, for a restore that cannot have its file:
// errUserLockBusy while another of the user's restores runs.
func (l *userLock) holdFolder() (*userLock, error) {
	err := eintr.Flock(l.dir, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return l, nil
	}
	unix.Close(l.dir)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, &folderBusyError{dir: l.path}
	}
	return nil, nil
}

// openUserLockDir makes and opens the folder of the user's locks: his own and no one
// else's to write into or open (whoever may open it may flock it: holdFolder), or -1.
func openUserLockDir(path string) int {
	if path == "" {
		return -1
	}
	if err := eintr.Mkdirat(unix.AT_FDCWD, path, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1
	}
	fd, err := eintr.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil || st.Uid != uint32(os.Geteuid()) || st.Mode&0o066 != 0 || !safeParent(fd) {
		unix.Close(fd)
		return -1
	}
	return fd
}

// safeParent reports whether the folder open as fd is where it is for good: its parent is
// root's or the user's, and no one else may rename what is in it (not writable by others,
// or sticky as /tmp is). Another's parent ($XDG_RUNTIME_DIR set to a shared folder) could
// move the folder away while a restore holds a lock in it, and the user's next restore
// would make a new one, without that lock, and run alongside.
func safeParent(fd int) bool {
	var st unix.Stat_t
	if eintr.Fstatat(fd, "..", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return (st.Uid == 0 || st.Uid == uint32(os.Geteuid())) && (st.Mode&0o022 == 0 || st.Mode&unix.S_ISVTX != 0)
}

// sameFileAt reports whether name in the folder dir (a symlink followed as flags say) is
// the file open as fd; the error is fd's. A name that cannot be stat'ed is not the file.
func sameFileAt(dir int, name string, flags int, fd int) (bool, error) {
	var held, at unix.Stat_t
	if err := eintr.Fstat(fd, &held); err != nil {
		return false, err
	}
	return eintr.Fstatat(dir, name, &at, flags) == nil && idOf(&held) == idOf(&at), nil
}

// lockNamed reports whether the lock file's name leads to the file open as fd.
func (l *userLock) lockNamed(fd int) bool {
	same, _ := sameFileAt(l.dir, l.name, unix.AT_SYMLINK_NOFOLLOW, fd)
	return same
}

// release removes the lock file, while still holding it, and gives the lock up (and the
// folder's). It removes the name only while it leads to the file held: one removed or
// renamed meanwhile (by hand, by a cleaner of /run) left the name to another restore's new
// file, which that restore holds.
func (l *userLock) release() {
	if l == nil {
		return
	}
	if l.fd >= 0 {
		if l.lockNamed(l.fd) {
			eintr.Unlinkat(l.dir, l.name, 0)
		}
		unix.Close(l.fd)
	}
	unix.Close(l.dir) // and the folder's flock with it
}

// lockUserOf takes the user's lock on the folder open as fd: errUserLockBusy when another
// restore by this user holds it.
func lockUserOf(fd int) (*userLock, error) {
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil {
		return nil, nil
	}
	return lockUser(&st)
}
