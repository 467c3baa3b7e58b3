package restore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
)

// A file with nothing at its name to replace is written as an unnamed file in its folder
// (O_TMPFILE) and linked to its name once its data are checked and its metadata set. No temp
// name exists for anyone to put a file of theirs at, nor for a killed run to leave behind, so
// none is recorded in the journal or checked before the link; the descriptor is the file, so
// no second one is held to keep its inode number. A file takes 10 system calls where one
// through a temp name took 17. The link is made from the descriptor, or on older kernels
// through /proc/self/fd, so unnamed files are used only where the move guard found procfs
// there, and only while the file system makes them (not NFS, say).

// writeUnnamed writes e as a new file named base in the folder dir, open as dfd. ok is false
// when the file system makes no unnamed files: nothing was made, and the temp name is used.
func (p *Plan) writeUnnamed(ctx context.Context, t *destTree, e *archive.Entry, buf []byte, span *archive.Span, dir string, dfd int, base string) (n int64, ok bool, err error) {
	fd, err := openUnnamed(dfd, p.perm(e)&0o777)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL):
		t.unnamed.Store(false)
		return 0, false, nil
	case err != nil:
		return 0, true, &fileOpError{removedDir(dir, dfd, fmt.Errorf("create temp file: %w", err))}
	}
	defer unix.Close(fd)
	var made unix.Stat_t
	if err := eintr.Fstat(fd, &made); err != nil {
		return 0, true, &fileOpError{err}
	}
	n, err = p.r.CopyCheckedIn(span, &progressWriter{ctx: ctx, w: fdWriter(fd), n: &p.written}, e, buf)
	if err == nil {
		err = p.finish(fd, &made, e)
	}
	if err == nil {
		err = t.linkUnnamed(dir, dfd, fd, idOf(&made), base)
		p.mark(dir)
	}
	if err != nil {
		return 0, true, err
	}
	if err := p.placeWritten(dfd, base, e, fd, idOf(&made)); err != nil {
		return 0, true, err
	}
	return n, true, nil
}

// openUnnamed makes an unnamed file in the folder dfd, open for writing. A folder below a
// mount inside the destination may be on a file system that makes none (EOPNOTSUPP), as may
// any on a kernel before 3.11 (EISDIR); a test makes it fail so.
var openUnnamed = func(dfd int, perm uint32) (int, error) {
	return eintr.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, perm)
}

// linkUnnamed gives the unnamed file open as fd, made, the name base in the folder dir, open
// as dfd, once the folder is known to be still in its place in the destination; it replaces
// nothing, not even a file that appeared since the plan was made.
func (t *destTree) linkUnnamed(dir string, dfd, fd int, made fileID, base string) error {
	if err := t.checkBeforeLink(dir); err != nil {
		return &fileOpError{err}
	}
	err := t.linkFD(fd, made, dfd, base)
	if errors.Is(err, unix.EEXIST) {
		return &fileOpError{errAppeared}
	}
	if err != nil {
		return &fileOpError{removedDir(dir, dfd, fmt.Errorf("link: %w", err))}
	}
	return nil
}

// linkFD gives the file open as fd, made, the name base in the folder dfd. A kernel since 6.10
// links the descriptor itself (AT_EMPTY_PATH) for the user who made the file; one before
// that only for a user with CAP_DAC_READ_SEARCH, and ENOENT for any other, who links through
// /proc/self/fd instead (which the move guard found to be procfs's) from then on.
func (t *destTree) linkFD(fd int, made fileID, dfd int, base string) error {
	if !t.linkByProc.Load() {
		err := linkDescriptor(fd, made, dfd, base)
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	err := eintr.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dfd, base, unix.AT_SYMLINK_FOLLOW, made)
	if err == nil {
		t.linkByProc.Store(true)
	}
	return err
}

// linkDescriptor links the file open as fd itself; a test makes it fail as an older kernel
// does.
var linkDescriptor = func(fd int, made fileID, dfd int, base string) error {
	return eintr.Linkat(fd, "", dfd, base, unix.AT_EMPTY_PATH, made)
}

// fdWriter writes to the file open as its descriptor.
type fdWriter int

func (w fdWriter) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Write(int(w), b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("write: %w", err)
		}
		n += m
	}
	return n, nil
}
