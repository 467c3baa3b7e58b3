package eintr

import (
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The calls below are unix's of the same name, repeated when a signal cuts them short.

func Fstat(fd int, st *unix.Stat_t) error {
	return repeat(func() error { return unix.Fstat(fd, st) })
}

func Fstatat(dirfd int, name string, st *unix.Stat_t, flags int) error {
	return repeat(func() error { return unix.Fstatat(dirfd, name, st, flags) })
}

func Lstat(path string, st *unix.Stat_t) error {
	return repeat(func() error { return unix.Lstat(path, st) })
}

func Fstatfs(fd int, st *unix.Statfs_t) error {
	return repeat(func() error { return unix.Fstatfs(fd, st) })
}

func Statfs(path string, st *unix.Statfs_t) error {
	return repeat(func() error { return unix.Statfs(path, st) })
}

func Faccessat(dirfd int, path string, mode uint32, flags int) error {
	return repeat(func() error { return unix.Faccessat(dirfd, path, mode, flags) })
}

func Readlinkat(dirfd int, path string, buf []byte) (int, error) {
	return repeatFD(func() (int, error) { return unix.Readlinkat(dirfd, path, buf) })
}

func NameToHandleAt(dirfd int, path string, flags int) (unix.FileHandle, int, error) {
	for {
		h, mount, err := unix.NameToHandleAt(dirfd, path, flags)
		if err != unix.EINTR {
			return h, mount, err
		}
	}
}

func Fsync(fd int) error {
	return repeat(func() error { return unix.Fsync(fd) })
}

func Flock(fd int, how int) error {
	return repeat(func() error { return unix.Flock(fd, how) })
}

func Fchmod(fd int, mode uint32) error {
	return repeat(func() error { return unix.Fchmod(fd, mode) })
}

func Fchown(fd int, uid, gid int) error {
	return repeat(func() error { return unix.Fchown(fd, uid, gid) })
}

func Fchownat(dirfd int, path string, uid, gid, flags int) error {
	return repeat(func() error { return unix.Fchownat(dirfd, path, uid, gid, flags) })
}

func Fsetxattr(fd int, attr string, data []byte, flags int) error {
	return repeat(func() error { return unix.Fsetxattr(fd, attr, data, flags) })
}

func Lsetxattr(path string, attr string, data []byte, flags int) error {
	return repeat(func() error { return unix.Lsetxattr(path, attr, data, flags) })
}

func UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error {
	return repeat(func() error { return unix.UtimesNanoAt(dirfd, path, ts, flags) })
}

// Futimens sets the times of the file open as fd: utimensat with a NULL path, which works
// on fd itself, as futimens(3) does.
func Futimens(fd int, ts *[2]unix.Timespec) error {
	return repeat(func() error {
		_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	})
}

// Openat opens name in the folder dirfd. With O_CREAT|O_EXCL, a create cut short that made
// the file (its repeat finds an empty regular file of this user's at the name) removes it
// and makes it again. O_TMPFILE makes a file without a name: one made by a try cut short
// is freed.
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	open := func() (int, error) { return unix.Openat(dirfd, name, flags, mode) }
	if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		return makeName(open, func() bool { return removeEmptyFile(dirfd, name) })
	}
	return repeatFD(open)
}

// OpenFile is os.OpenFile through Openat: with O_EXCL, a create cut short that made the
// file is made again, where os.OpenFile would report the name taken.
func OpenFile(path string, flags int, perm uint32) (*os.File, error) {
	fd, err := Open(path, flags|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Open is Openat from the current folder.
func Open(path string, flags int, mode uint32) (int, error) {
	return Openat(unix.AT_FDCWD, path, flags, mode)
}

// Mkdirat makes a folder. A mkdir cut short that made it (its repeat finds an empty folder
// of this user's at the name) made it.
func Mkdirat(dirfd int, name string, mode uint32) error {
	cut := false
	for {
		err := unix.Mkdirat(dirfd, name, mode)
		switch {
		case err == unix.EINTR:
			cut = true
		case cut && err == unix.EEXIST && emptyFolder(dirfd, name):
			return nil
		default:
			return err
		}
	}
}

// Symlinkat makes a symlink. One cut short that made it (its repeat finds a symlink of this
// user's to target at the name) is removed and made again.
func Symlinkat(target string, dirfd int, name string) error {
	_, err := makeName(func() (int, error) { return 0, unix.Symlinkat(target, dirfd, name) },
		func() bool { return removeSymlink(dirfd, name, target) })
	return err
}

// Linkat links the file linking (its identity) at newpath in the folder newdirfd. A try
// cut short after which newpath holds it was done.
func Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int, linking ID) error {
	return moveName(func() error { return unix.Linkat(olddirfd, oldpath, newdirfd, newpath, flags) }, newdirfd, newpath, linking)
}

// Renameat2 renames the file moving (its identity) from oldpath in olddirfd to newpath in
// newdirfd, with unix.Renameat2's flags. A try cut short after which newpath holds it was
// done; for an exchange, a repeat would undo it.
func Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint, moving ID) error {
	return moveName(func() error { return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, flags) }, newdirfd, newpath, moving)
}

// Renameat is Renameat2 without flags, for the file systems that have no renameat2.
func Renameat(olddirfd int, oldpath string, newdirfd int, newpath string, moving ID) error {
	return moveName(func() error { return unix.Renameat(olddirfd, oldpath, newdirfd, newpath) }, newdirfd, newpath, moving)
}

// Unlinkat removes name from the folder dirfd. When a try was cut short and a later one
// finds the name gone (ENOENT), the name is gone as asked: that is success.
func Unlinkat(dirfd int, name string, flags int) error {
	return removeName(func() error { return unix.Unlinkat(dirfd, name, flags) })
}

// Unlink is Unlinkat from the current folder.
func Unlink(path string) error {
	return Unlinkat(unix.AT_FDCWD, path, 0)
}

// Rename renames the path oldpath to newpath, with unix.Renameat2's flags, as Renameat2
// does the file oldpath holds when it starts.
func Rename(oldpath, newpath string, flags uint) error {
	var st unix.Stat_t
	if err := Lstat(oldpath, &st); err != nil {
		return err
	}
	return Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, flags, IDOf(&st))
}
