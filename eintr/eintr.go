package eintr

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ID is a file's identity: its device and inode.
type ID struct{ Dev, Ino uint64 }

// IDOf is the identity of the file st describes.
func IDOf(st *unix.Stat_t) ID { return ID{Dev: uint64(st.Dev), Ino: st.Ino} }

// holds reports whether name in the folder dirfd is the file id, never following a symlink.
func holds(dirfd int, name string, id ID) bool {
	var st unix.Stat_t
	return Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && IDOf(&st) == id
}

// repeat calls call until a signal does not cut it short.
func repeat(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// repeatFD is repeat for a call that returns a descriptor or a count.
func repeatFD(call func() (int, error)) (int, error) {
	for {
		if n, err := call(); err != unix.EINTR {
			return n, err
		}
	}
}

// maxRemakes is how many times makeName makes a name again: a server that makes the name
// and reports the call cut short every time would keep it going for ever.
const maxRemakes = 10

// makeName repeats call, which makes a name, until a signal does not cut it short. When a
// try was cut short and a later one finds the name taken (EEXIST), the cut try may have made
// it: removeMade removes it if the name holds what call makes, of this user's, and reports
// whether it did; call then makes it again, up to maxRemakes times. Anything else at the
// name is someone's, and the error is EEXIST.
func makeName(call func() (int, error), removeMade func() bool) (int, error) {
	cut, remakes := false, 0
	for {
		n, err := call()
		switch {
		case err == unix.EINTR:
			cut = true
		case cut && err == unix.EEXIST && remakes < maxRemakes && removeMade():
			cut = false
			remakes++
		default:
			return n, err
		}
	}
}

// mine reports whether st is of this user's and of the type typ (unix.S_IFREG, …).
func mine(st *unix.Stat_t, typ uint32) bool {
	return st.Mode&unix.S_IFMT == typ && int(st.Uid) == os.Geteuid()
}

// removeEmptyFile removes name from the folder dirfd if it is an empty regular file of this
// user's, as a create makes it.
func removeEmptyFile(dirfd int, name string) bool {
	var st unix.Stat_t
	return Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && mine(&st, unix.S_IFREG) &&
		st.Size == 0 && st.Nlink == 1 && Unlinkat(dirfd, name, 0) == nil
}

// removeSymlink removes name from the folder dirfd if it is a symlink of this user's to
// target.
func removeSymlink(dirfd int, name, target string) bool {
	var st unix.Stat_t
	if Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !mine(&st, unix.S_IFLNK) {
		return false
	}
	buf := make([]byte, len(target)+1)
	n, err := Readlinkat(dirfd, name, buf)
	return err == nil && string(buf[:n]) == target && Unlinkat(dirfd, name, 0) == nil
}

// emptyFolder reports whether name in the folder dirfd is an empty folder of this user's,
// as a mkdir makes it.
func emptyFolder(dirfd int, name string) bool {
	var st unix.Stat_t
	if Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !mine(&st, unix.S_IFDIR) {
		return false
	}
	fd, err := Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// moveName repeats call, which gives the file id the name name in the folder dirfd (a link
// or a rename), until a signal does not cut it short; a try cut short after which the name
// holds id was done, and is not repeated (a repeat would fail with EEXIST or ENOENT, or
// undo an exchange).
func moveName(call func() error, dirfd int, name string, id ID) error {
	for {
		err := call()
		if err != unix.EINTR {
			return err
		}
		if holds(dirfd, name, id) {
			return nil
		}
	}
}

// removeName repeats call, which removes a name, until a signal does not cut it short; when
// a try was cut short and a later one finds the name gone (ENOENT), the name is gone as
// asked, and that is success.
func removeName(call func() error) error {
	cut := false
	for {
		err := call()
		switch {
		case err == unix.EINTR:
			cut = true
		case cut && err == unix.ENOENT:
			return nil
		default:
			return err
		}
	}
}
