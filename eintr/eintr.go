package eintr

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ErrCut is matched by errors.Is on the error of a call that makes a name, when a signal
// cut its first try short and the repeat found the name taken: the first try may have made
// it. The error matches the repeat's errno (EEXIST) too, so a caller that does not look for
// ErrCut treats the name as someone else's, which is never wrong, only less helpful.
var ErrCut = errors.New("a try cut short by a signal may have made it")

type cutError struct{ err error }

func (e cutError) Error() string   { return e.err.Error() + " (" + ErrCut.Error() + ")" }
func (e cutError) Unwrap() []error { return []error{e.err, ErrCut} }

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

// makeName repeats call, which makes a name, until a signal does not cut it short; when a
// try was cut short and a later one finds the name taken (EEXIST), its error matches
// ErrCut.
func makeName(call func() (int, error)) (int, error) {
	cut := false
	for {
		n, err := call()
		switch {
		case err == unix.EINTR:
			cut = true
		case cut && err == unix.EEXIST:
			return n, cutError{err}
		default:
			return n, err
		}
	}
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
