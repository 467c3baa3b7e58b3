package archive

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// What restore --force replaces is what its plan saw and its before-state saved, and only
// that: a file the user put at the name since (or a FIFO, a device, a folder, which a
// before-state cannot hold) is never renamed over. The plan records each conflict's
// identity (nodeID, never following a link); the rename is an atomic exchange,
// and what came out of the name is checked against it: the expected file is removed, and
// anything else is put back.

// errReplaced is the cause when a name holds something else than the plan saw there.
var errReplaced = errors.New("was replaced in the destination during the restore; what is there now is left as it is")

// errAppeared is the cause when a name the plan saw free holds something now.
var errAppeared = errors.New("appeared in the destination during the restore")

// replacing returns the identity of what the plan saw at name, when Run may replace it (a
// conflict, with Force); nil when Run is to replace nothing there.
func (p *RestorePlan) replacing(name string) *nodeID {
	if !p.opts.Force {
		return nil
	}
	if id, ok := p.replaces[name]; ok {
		return &id
	}
	return nil
}

// renameNew moves tmp to base in the folder dfd when base is free.
func renameNew(dfd int, tmp, base string) error {
	err := unix.Renameat2(dfd, tmp, dfd, base, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EEXIST) {
		return &fileOpError{errAppeared}
	}
	if err != nil {
		return &fileOpError{fmt.Errorf("rename: %w", err)}
	}
	return nil
}

// replaceChecked moves tmp to base in the folder dfd in place of old, the file the plan saw
// there, and of nothing else. What base holds is opened (O_PATH: a FIFO or a device is not
// opened for I/O) and checked to be old; held open, its inode number cannot pass to another
// file. Then the two names are exchanged atomically (RENAME_EXCHANGE), and what now has the
// temp name is checked to be that file: it is removed; anything else (put there between
// the check and the exchange) is exchanged back, and the entry fails. A name that holds
// nothing any more is filled as a new one. On a file system without the exchange, the check
// is followed by a plain rename (a change between the two is not seen).
func replaceChecked(dfd int, tmp, base string, old nodeID) error {
	fd, err := unix.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return renameNew(dfd, tmp, base) // gone since the plan; the before-state holds it
	}
	if err != nil {
		return &fileOpError{err}
	}
	defer unix.Close(fd)
	seen, err := fdID(fd)
	if err != nil {
		return err
	}
	if seen != old {
		return &fileOpError{errReplaced}
	}
	err = unix.Renameat2(dfd, tmp, dfd, base, unix.RENAME_EXCHANGE)
	switch {
	case errors.Is(err, unix.ENOENT):
		return renameNew(dfd, tmp, base)
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		err = unix.Renameat(dfd, tmp, dfd, base)
	case err == nil:
		return keepIfSeen(dfd, tmp, base, seen)
	}
	if err != nil {
		return &fileOpError{fmt.Errorf("rename: %w", err)}
	}
	return nil
}

// keepIfSeen finishes an exchange of tmp and base: what now has the name tmp is removed when
// it is the file seen at base before (the exchange changed its ctime, not its inode), and
// exchanged back otherwise.
func keepIfSeen(dfd int, tmp, base string, seen nodeID) error {
	if out, err := statID(dfd, tmp); err == nil && out.file == seen.file && out.typ == seen.typ {
		unix.Unlinkat(dfd, tmp, 0) // a failure leaves a name the journal holds
		return nil
	}
	if err := unix.Renameat2(dfd, tmp, dfd, base, unix.RENAME_EXCHANGE); err != nil {
		return &fileOpError{&strandedError{tmp: tmp, err: err}}
	}
	return &fileOpError{errReplaced}
}

// strandedError is an exchange that could not be undone: the restored file is at its name,
// and what someone put there during the restore is at the temp name, which must not be
// removed.
type strandedError struct {
	tmp string
	err error
}

func (e *strandedError) Error() string {
	return fmt.Sprintf("%v; what was put there during the restore is now at %s: %v", errReplaced, QuoteName(e.tmp), e.err)
}

// dropTemp removes this run's temp file tmp after err, unless tmp now holds something that
// is not this run's.
func dropTemp(dfd int, tmp string, err error) {
	if !errors.As(err, new(*strandedError)) {
		unix.Unlinkat(dfd, tmp, 0)
	}
}

// nodeID tells one file at a name from any other that is put there later: the device and
// inode, and, since a file system gives a freed inode number to the next file made (rm f;
// mkfifo f), its type and its ctime, which every new file and every change sets afresh.
type nodeID struct {
	file  fileID
	typ   uint32
	ctime unix.Timespec
}

func nodeOf(st *unix.Stat_t) nodeID {
	return nodeID{file: idOf(st), typ: st.Mode & unix.S_IFMT, ctime: st.Ctim}
}

// statID is the identity of name in the folder dfd, never following a symlink.
func statID(dfd int, name string) (nodeID, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nodeID{}, err
	}
	return nodeOf(&st), nil
}

// fdID is the identity of the file open as fd.
func fdID(fd int) (nodeID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nodeID{}, &fileOpError{err}
	}
	return nodeOf(&st), nil
}
