package walker

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// OpXattr is the op of a warning for extended attributes that could not be read.
const OpXattr = "xattr"

// errNoLongerLink is the cause when a symlink the walk listed is something else by the time
// its target is read (replaced by a file, as `sed -i` does to a link): the link is gone, as a
// path that vanished is, and what took its name was never listed. It is fs.ErrNotExist to
// errors.Is, so that it is told as such.
var errNoLongerLink = noLongerLink{}

type noLongerLink struct{}

func (noLongerLink) Error() string { return "no longer a symlink (replaced since the walk listed it)" }

func (noLongerLink) Is(target error) bool { return target == fs.ErrNotExist }

// Readlink returns the target of the symlink e, read relative to its directory. Call it
// during Visit.
func (e Entry) Readlink() (string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := eintr.Readlinkat(e.parent.fd, e.base, buf)
		if errors.Is(err, unix.EINVAL) {
			err = errNoLongerLink
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
// name; empty when it has none. When one cannot be read it returns nil and the first such
// error: a record of the others would say the entry has those only, and restore --force
// would take the one not read away. They are read through the entry's directory descriptor
// (/proc/self/fd/N/name), never by a path from the root. Call it during Visit.
func (e Entry) Xattrs() (map[string][]byte, error) {
	if e.IsDir() && e.self != nil {
		// A directory's are read through the descriptor the walk lists it by, checked to be
		// the directory lstat saw: by name, another directory swapped in and out again
		// while they were read would lend its attributes to this one's contents. One that
		// cannot be opened is lost when the walk lists it; its attributes are read by name.
		if d, err := e.self.open(e.parent, e.base, e.Info); err == nil {
			return FdXattrs(d.fd, e.Name)
		}
	}
	path := "/proc/self/fd/" + strconv.Itoa(e.parent.fd) + "/" + e.base
	return readXattrs(e.Name,
		func(b []byte) (int, error) { return unix.Llistxattr(path, b) },
		func(name string, b []byte) (int, error) { return unix.Lgetxattr(path, name, b) })
}

// Xattrs returns the extended attributes of the open file, as Entry.Xattrs does an entry's:
// read through its descriptor, so they are those of the very file read, whatever its name
// holds by now.
func (f *File) Xattrs() (map[string][]byte, error) {
	return FdXattrs(f.fd, f.name)
}

// FdXattrs returns the extended attributes of the file open as fd (none on a file system
// without them); errors name name.
func FdXattrs(fd int, name string) (map[string][]byte, error) {
	return readXattrs(name,
		func(b []byte) (int, error) { return unix.Flistxattr(fd, b) },
		func(attr string, b []byte) (int, error) { return unix.Fgetxattr(fd, attr, b) })
}

// readXattrs lists the attributes with list and reads each with get; errors name the entry
// name. Any error returns nil: the attributes were not read, not read as none.
func readXattrs(name string, list func([]byte) (int, error), get func(string, []byte) (int, error)) (map[string][]byte, error) {
	names, err := listXattrs(list)
	if errors.Is(err, unix.ENOTSUP) { // a file system without them: read, and none
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, xattrError(name, err)
	}
	attrs := make(map[string][]byte, len(names))
	var first error
	total := 0
	for _, attr := range names {
		v, err := sized(func(b []byte) (int, error) { return get(attr, b) })
		switch {
		case errors.Is(err, unix.ENODATA): // removed since it was listed
		case err != nil && first == nil:
			first = xattrError(name, fmt.Errorf("%s: %w", attr, err))
		case err == nil:
			attrs[attr] = v
		}
		if total += len(attr) + len(v); total > MaxXattrsSize {
			return nil, xattrError(name, errXattrsTooLarge)
		}
	}
	if first != nil {
		return nil, first
	}
	return attrs, nil
}

// MaxXattrsSize bounds the extended attributes read of one file, names and values: a
// manifest record holds them all, and a reader refuses a record past
// format.MaxManifestRecord. Linux allows values of 64 KiB, as many as names fit in 64 KiB;
// no real file comes near.
const MaxXattrsSize = 8 << 20

var errXattrsTooLarge = fmt.Errorf("more than %d bytes of attributes", MaxXattrsSize)

func xattrError(name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: OpXattr, Path: name, Err: err}
}

func listXattrs(list func([]byte) (int, error)) ([]string, error) {
	buf, err := sized(list)
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
		switch {
		case err == syscall.ERANGE || err == syscall.EINTR:
			continue
		case err != nil: // the count is then -1: the attribute went since the first call, say
			return nil, err
		}
		return buf[:n], nil
	}
}
