package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// The system calls that change what the final paths hold, as variables so that tests can
// make any one of them fail.
var (
	renameat2 = func(from, to string, flags uint) error {
		err := eintr.Rename(from, to, flags)
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
	syncDir = SyncDir
)

// Error is a failed Publish: the rename or folder sync that failed, and what the rollback
// could not undo. Unless Stuck lists something, every final path holds what it held before.
type Error struct {
	// Err is the failure that stopped the publish.
	Err error
	// Stuck says, for each final path the rollback could not restore, what it holds now.
	Stuck []string
	// Unsynced is why the rolled-back folders could not be synced, if they could not: the
	// final paths hold their old files, but a crash might still show the new ones.
	Unsynced error
}

// Error says what failed and what the final paths hold now, in one line.
func (e *Error) Error() string {
	msg := e.Err.Error()
	if len(e.Stuck) == 0 {
		msg += "; the final paths are as they were"
	} else {
		msg += "; rollback failed: " + strings.Join(e.Stuck, "; ") + "; any other final path is as it was"
	}
	if e.Unsynced != nil {
		msg += fmt.Sprintf(" (but not synced: %v)", e.Unsynced)
	}
	return msg
}

// Unwrap returns Err, so that errors.Is finds its cause (fs.ErrExist, an errno).
func (e *Error) Unwrap() error { return e.Err }

// placed is one staged file moved to its final path.
type placed struct {
	*Staged
	// old is where the file that was at Final is now: Temp after a swap, an aside name on a
	// file system without RENAME_EXCHANGE; "" when there was none.
	old string
}

// Publish moves each staged file to its final path, in order, and syncs their folders, as
// one unit. On success every final path holds its new file and the old files are removed.
// On failure it puts back what it moved (an old file is swapped with the new one by
// RENAME_EXCHANGE, or renamed aside first, so it can always be put back) and syncs again,
// so that every final path holds what it held before; the error is an *Error that says so,
// or says what the rollback could not restore. Publish owns the temp files: none is left
// after it returns, except an old file the rollback could not put back, which the error
// names, or, after a success, an old file it could not remove, which that file's Left
// names. A Publish that replaces takes turns with any other over the same final paths
// (publish_lock.go).
func Publish(files ...*Staged) error {
	if err := distinct(files); err != nil {
		discard(files, nil)
		return err
	}
	defer lockFinals(files, true)()
	return publish(files)
}

// publish is Publish, its files distinct and locked.
func publish(files []*Staged) error {
	var done []placed
	for _, f := range files {
		p, err := place(f)
		if err != nil {
			return rollback(err, files, done)
		}
		done = append(done, p)
	}
	if err := syncDirs(files); err != nil {
		return rollback(err, files, done)
	}
	for _, p := range done {
		if p.old == "" {
			continue
		}
		if err := eintr.Unlink(p.old); err != nil {
			p.Left = fmt.Errorf("the old %s stays at %s: %w", p.Final, p.old, err)
		}
	}
	return nil
}

// distinct refuses two files for one final path: the second would silently replace the
// first, as a receipt once replaced its own archive.
func distinct(files []*Staged) error {
	seen := map[string]bool{}
	for _, f := range files {
		final := filepath.Clean(f.Final)
		if seen[final] {
			return fmt.Errorf("publishing two files at %s", final)
		}
		seen[final] = true
	}
	return nil
}

// place moves f to its final path: swapped with the file there, or into a free name.
func place(f *Staged) (placed, error) {
	if !f.NoReplace {
		info, err := os.Lstat(f.Final)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return placed{}, err // an I/O error: whether a file is there is not known
		}
		if err == nil && info.IsDir() {
			return placed{}, &os.LinkError{Op: "rename", Old: f.Temp, New: f.Final, Err: syscall.EISDIR}
		}
		if err == nil {
			err = renameat2(f.Temp, f.Final, unix.RENAME_EXCHANGE)
			switch {
			case errors.Is(err, unix.EINVAL):
				return placeAside(f)
			case err == nil || !errors.Is(err, unix.ENOENT):
				return placed{f, f.Temp}, err
			}
			// The old file went away since the Lstat: there is nothing to swap with.
		}
	}
	return placed{f, ""}, renameat2(f.Temp, f.Final, unix.RENAME_NOREPLACE)
}

// placeAside replaces the file at f.Final on a file system without RENAME_EXCHANGE (exFAT,
// for one): the old file is renamed aside under a temp name first, so that it can be put
// back. Unlike a swap, a crash between the two renames leaves nothing at the final path.
func placeAside(f *Staged) (placed, error) {
	aside := f.Temp + ".old"
	if err := renameat2(f.Final, aside, unix.RENAME_NOREPLACE); err != nil {
		return placed{}, err
	}
	err := renameat2(f.Temp, f.Final, unix.RENAME_NOREPLACE)
	if err != nil {
		if back := renameat2(aside, f.Final, unix.RENAME_NOREPLACE); back != nil {
			return placed{}, &Error{Err: err, Stuck: []string{fmt.Sprintf("%s holds nothing and its old file is at %s (%v)", f.Final, aside, back)}}
		}
	}
	return placed{f, aside}, err
}

// rollback undoes done in reverse order after cause, syncs the folders again and removes
// the temp files that hold new data.
func rollback(cause error, files []*Staged, done []placed) error {
	e := &Error{Err: cause}
	var pe *Error
	if errors.As(cause, &pe) { // placeAside could not put its old file back
		e = pe
	}
	stuck := map[*Staged]bool{}
	for i := len(done) - 1; i >= 0; i-- {
		if msg := undo(done[i]); msg != "" {
			stuck[done[i].Staged] = true
			e.Stuck = append(e.Stuck, msg)
		}
	}
	if len(done) > 0 {
		e.Unsynced = syncDirs(files)
	}
	discard(files, stuck)
	return e
}

// undo puts back what place did, and returns "" or what the final path holds when it
// cannot.
func undo(p placed) string {
	if p.old == p.Temp {
		if err := renameat2(p.Temp, p.Final, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Sprintf("%s holds the new file and its old one is at %s (%v)", p.Final, p.Temp, err)
		}
		return ""
	}
	if err := renameat2(p.Final, p.Temp, unix.RENAME_NOREPLACE); err != nil {
		if p.old != "" {
			return fmt.Sprintf("%s holds the new file and its old one is at %s (%v)", p.Final, p.old, err)
		}
		return fmt.Sprintf("%s holds the new file (%v)", p.Final, err)
	}
	if p.old == "" {
		return ""
	}
	if err := renameat2(p.old, p.Final, unix.RENAME_NOREPLACE); err != nil {
		eintr.Unlink(p.Temp) // the new file, moved back
		return fmt.Sprintf("%s holds nothing and its old file is at %s (%v)", p.Final, p.old, err)
	}
	return ""
}

// discard removes the temp files, except those of stuck files: such a temp may hold the old
// file the error tells the user about.
func discard(files []*Staged, stuck map[*Staged]bool) {
	for _, f := range files {
		if !stuck[f] {
			eintr.Unlink(f.Temp)
		}
	}
}

// syncDirs syncs the folder of each final path, each once.
func syncDirs(files []*Staged) error {
	synced := map[string]bool{}
	for _, f := range files {
		dir := DirOf(f.Final)
		if synced[dir] {
			continue
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		synced[dir] = true
	}
	return nil
}
