package walker

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpXattr is the op of a warning for extended attributes that could not be read.
const OpXattr = "xattr"

// Readlink returns the target of the symlink e, read relative to its directory. Call it
// during Visit.
func (e Entry) Readlink() (string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(e.parent.fd, e.base, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: OpOpen, Path: e.Name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// Xattrs returns the extended attributes of e (of the symlink itself, for a symlink) by
// name; nil when it has none. An attribute that cannot be read is left out, and the first
// such error returned with the others. They are read through the entry's directory descriptor
// (/proc/self/fd/N/name), never by a path from the root. Call it during Visit.
func (e Entry) Xattrs() (map[string][]byte, error) {
	path := "/proc/self/fd/" + strconv.Itoa(e.parent.fd) + "/" + e.base
	names, err := listXattrs(path)
	if errors.Is(err, unix.ENOTSUP) { // a file system without them
		return nil, nil
	}
	if err != nil || len(names) == 0 {
		return nil, xattrError(e.Name, err)
	}
	attrs := make(map[string][]byte, len(names))
	var first error
	for _, name := range names {
		v, err := getXattr(path, name)
		switch {
		case errors.Is(err, unix.ENODATA): // removed since it was listed
		case err != nil && first == nil:
			first = xattrError(e.Name, fmt.Errorf("%s: %w", name, err))
		case err == nil:
			attrs[name] = v
		}
	}
	return attrs, first
}

func xattrError(name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: OpXattr, Path: name, Err: err}
}

func listXattrs(path string) ([]string, error) {
	buf, err := sized(func(b []byte) (int, error) { return unix.Llistxattr(path, b) })
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range bytes.SplitSeq(buf, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	return names, nil
}

func getXattr(path, name string) ([]byte, error) {
	return sized(func(b []byte) (int, error) { return unix.Lgetxattr(path, name, b) })
}

// sized calls get with a buffer large enough for its answer, which may grow between the
// call that asks for the size and the one that reads.
func sized(get func([]byte) (int, error)) ([]byte, error) {
	for {
		n, err := get(nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = get(buf)
		if err == syscall.ERANGE || err == syscall.EINTR {
			continue
		}
		return buf[:n], err
	}
}
