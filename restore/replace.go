package restore

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"backup/eintr"
	"backup/format"
)

// What restore --force replaces is what its plan saw and its before-state saved, and only
// that: a file the user put at the name since (or a FIFO, a device, a folder, which a
// before-state cannot hold) is never renamed over. The plan records each conflict's
// identity (nodeID, never following a link); the rename is an atomic exchange,
// and what came out of the name is checked against it: the expected file is removed, and
// anything else is put back.

// errReplaced is the cause when a name holds something else than the plan saw there, or the
// same file changed since (its ctime moved: the before-state may not hold what it is now).
var errReplaced = errors.New("was changed or replaced in the destination during the restore; what is there now is left as it is")

// errAppeared is the cause when a name the plan saw free holds something now.
var errAppeared = errors.New("appeared in the destination during the restore")

// replacing returns the identity of what the plan saw at name, when Run may replace it (a
// conflict, with Force); nil when Run is to replace nothing there.
func (p *Plan) replacing(name string) *nodeID {
	if !p.opts.Force {
		return nil
	}
	if id, ok := p.replaces[name]; ok {
		return &id
	}
	return nil
}

// checkedRename moves the checked temp file, made, to its name in the folder dir (open as
// dfd), once the folder is known to be still in its place in the destination and the temp
// name to hold made still. It replaces only old, what the plan saw at that name (see
// replaceChecked), and removes it; with old nil it replaces nothing, not even a file that
// appeared since the plan was made.
func (t *destTree) checkedRename(dir string, dfd int, tmp, base string, made fileID, old *nodeID) error {
	if err := t.check(dir); err != nil {
		return &fileOpError{err}
	}
	if err := checkTemp(dfd, tmp, made); err != nil {
		return err
	}
	if old == nil {
		err := renameNew(dfd, tmp, base, made)
		if err == nil {
			t.journal.settle(dir, tmp)
		}
		return err
	}
	// One replacement at a time, so that the names of one file (hard links) are each
	// checked against what the replacement of the one before left: taking a name from a
	// file changes its ctime, which the next name's check would take for someone's change.
	// A change made between the exchange and the fstat after it (microseconds) would pass
	// as this restore's own.
	t.replaceMu.Lock()
	defer t.replaceMu.Unlock()
	want := t.replacedSince(*old)
	res, err := replaceChecked(dfd, tmp, base, made, want)
	if res.displaced && res.after != want {
		t.replaced[want] = res.after
	}
	if err == nil && (!res.displaced || res.removed) {
		// What was replaced is gone (the before-state holds it); a removal that failed is
		// tried again at the end of the run (journal.finish).
		t.journal.settle(dir, tmp)
	}
	return err
}

// errTempReplaced is the cause when a temp name no longer holds the file this run made
// there: whoever may write in the folder may have put a file of theirs at it.
var errTempReplaced = errors.New("its temp file was replaced in the destination during the restore; what is there now is left as it is")

// checkTemp checks that the temp name tmp in the folder dfd still holds made, the file this
// run wrote (or linked) there: a file put at the name by someone else must not be renamed
// into place as this restore's, nor given its owner.
func checkTemp(dfd int, tmp string, made fileID) error {
	var st unix.Stat_t
	err := eintr.Fstatat(dfd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &fileOpError{checkFailed(tmp, err)} // an I/O error says nothing of a swap
	}
	if err != nil || idOf(&st) != made {
		return &fileOpError{errTempReplaced}
	}
	return nil
}

// checkFailed is the cause when a check of what this run made at name cannot be made
// (lstat fails with an I/O error): that error, which says nothing of anyone's change.
func checkFailed(name string, err error) error {
	return fmt.Errorf("lstat %s: %w", format.QuoteName(name), err)
}

// replacedSince is what a file the plan saw as old is now expected to be: old, unless this
// restore took another of its names since (see replaced), each time changing its ctime.
func (s *destShared) replacedSince(old nodeID) nodeID {
	for range len(s.replaced) { // a clock set back could make a cycle
		next, ok := s.replaced[old]
		if !ok {
			break
		}
		old = next
	}
	return old
}

// replacement is what replaceChecked did: whether the file the plan saw was displaced (it
// was at the name, and is now out of the destination), whether its temp name was removed,
// and its identity after that.
type replacement struct {
	displaced, removed bool
	after              nodeID
}

// renameNew moves tmp, made, to base in the folder dfd when base is free.
func renameNew(dfd int, tmp, base string, made fileID) error {
	err := eintr.Renameat2(dfd, tmp, dfd, base, unix.RENAME_NOREPLACE, made)
	if errors.Is(err, unix.EEXIST) {
		return &fileOpError{errAppeared}
	}
	if err != nil {
		return &fileOpError{fmt.Errorf("rename: %w", err)}
	}
	return nil
}

// replaceChecked moves tmp, made, to base in the folder dfd in place of old, the file the
// plan saw there, and of nothing else, and removes it. What base holds is opened (O_PATH: a
// FIFO or a device is not opened for I/O) and checked to be old; held open, its inode
// number cannot pass to another file. Then the two names are exchanged atomically
// (RENAME_EXCHANGE), and what now has the temp name is checked to be that file: it is
// removed; anything else (put there between the check and the exchange) is exchanged back,
// and the entry fails. A name that holds nothing any more is filled as a new one. On a file
// system without the exchange, the check is followed by a plain rename (a change between
// the two is not seen).
func replaceChecked(dfd int, tmp, base string, made fileID, old nodeID) (replacement, error) {
	fd, err := eintr.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return replacement{}, renameNew(dfd, tmp, base, made) // gone since the plan; the before-state holds it
	}
	if err != nil {
		return replacement{}, &fileOpError{err}
	}
	defer unix.Close(fd)
	seen, err := fdID(fd)
	if err != nil {
		return replacement{}, err
	}
	if seen != old {
		return replacement{}, &fileOpError{errReplaced}
	}
	err = eintr.Renameat2(dfd, tmp, dfd, base, unix.RENAME_EXCHANGE, made)
	switch {
	case errors.Is(err, unix.ENOENT):
		return replacement{}, renameNew(dfd, tmp, base, made)
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		err = eintr.Renameat(dfd, tmp, dfd, base, made)
	case err == nil:
		if err := checkDisplaced(dfd, tmp, base, seen); err != nil {
			return replacement{}, err
		}
		res := replacement{displaced: true, removed: eintr.Unlinkat(dfd, tmp, 0) == nil}
		res.after, _ = fdID(fd)
		return res, nil
	}
	if err != nil {
		return replacement{}, &fileOpError{fmt.Errorf("rename: %w", err)}
	}
	res := replacement{displaced: true, removed: true}
	res.after, _ = fdID(fd)
	return res, nil
}

// checkDisplaced checks an exchange of tmp and base: what now has the name tmp must be the
// file seen at base before (the exchange changed its ctime, not its inode); anything else
// is exchanged back.
func checkDisplaced(dfd int, tmp, base string, seen nodeID) error {
	out, err := statID(dfd, tmp)
	if err == nil && out.file == seen.file && out.typ == seen.typ {
		return nil
	}
	if err := eintr.Renameat2(dfd, tmp, dfd, base, unix.RENAME_EXCHANGE, out.file); err != nil {
		return &fileOpError{&strandedError{tmp: tmp, err: err}}
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &fileOpError{checkFailed(tmp, err)} // exchanged back all the same: not checked
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
	return fmt.Sprintf("%v; what was put there during the restore is now at %s: %v", errReplaced, format.QuoteName(e.tmp), e.err)
}

// dropTemp removes this run's temp file tmp in the folder dir (open as dfd) after err,
// unless tmp now holds something that is not this run's. A temp file that cannot be removed
// stays pending in the journal.
func (t *destTree) dropTemp(dir string, dfd int, tmp string, err error) {
	notOurs := errors.As(err, new(*strandedError)) || errors.Is(err, errTempReplaced)
	if notOurs || eintr.Unlinkat(dfd, tmp, 0) == nil {
		t.journal.settle(dir, tmp)
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
	if err := eintr.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nodeID{}, err
	}
	return nodeOf(&st), nil
}

// fdID is the identity of the file open as fd.
func fdID(fd int) (nodeID, error) {
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		return nodeID{}, &fileOpError{err}
	}
	return nodeOf(&st), nil
}
