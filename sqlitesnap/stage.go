package sqlitesnap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
)

// A staged copy has a name for as long as SQLite writes it. What a run killed meanwhile
// leaves in the output folder of a backup set, the set's next run removes; $TMPDIR, where
// an encrypted or streamed archive stages, is no set's, and a killed run's copy (plaintext,
// for an encrypted archive) would stay there for good. So a run holds its staged copy under
// an flock until the copy's name is gone, and Sweep removes the copies no process holds.

// stagePrefix begins a staged copy's name; os.CreateTemp's digits follow.
const stagePrefix = atomicfile.SpoolPrefix + "sqlite-"

// errSwept says that a new staged copy was removed by a sweep before its run locked it.
var errSwept = errors.New("staged copy removed before it was locked")

// stageFile creates a staged copy in dir, locked, and registered for removal at a forced
// exit until forget is called. A sweep may take the new file for a dead run's between the
// create and the lock, and remove it: once locked, the name must still lead to the file,
// or SQLite would write a copy that no lock keeps from the next sweep.
func stageFile(dir string) (f *os.File, forget func(), err error) {
	for try := 0; ; try++ {
		f, forget, err = atomicfile.CreateTempRemovedAtExit(dir, stagePrefix+"*", sidecarSuffixes...)
		if err != nil {
			return nil, nil, err
		}
		if err = lockNamed(f, unix.LOCK_EX); err == nil || noFlock(err) {
			return f, forget, nil
		}
		f.Close()
		swept := errors.Is(err, errSwept)
		if !swept {
			eintr.Remove(f.Name()) // still ours: the lock failed, not the name
		}
		forget()
		if !swept || try == 10 {
			return nil, nil, err
		}
	}
}

// checkStageDir says why dir is no place for a staged copy: another user may swap the files
// in it, or the folder itself or one above it, since it is theirs, or they may write it and
// it has no sticky bit (which lets only an entry's owner rename it, as in /tmp). SQLite
// opens the copy, and its journal, by name: a file of theirs put at that name would receive
// the database (plaintext, for an encrypted archive) and give the archive whatever they
// wrote. Each folder from dir up to the root is checked (atomicfile.FixedPath).
func checkStageDir(dir string) error {
	if err := atomicfile.FixedPath(dir); err != nil {
		return fmt.Errorf("the staging folder %s: %w", dir, err)
	}
	return nil
}

// noFlock reports a file system that has no flock (ENOLCK: NFS without its lock daemon;
// EOPNOTSUPP or ENOSYS: some FUSE file systems). A copy staged there goes unlocked, as
// before the sweep: no run can lock it to sweep it either.
func noFlock(err error) bool {
	return errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

// lockNamed takes the flock how (LOCK_EX, or with LOCK_NB) on f, and checks that f's name
// still leads to it: errSwept when the name is gone or leads elsewhere.
func lockNamed(f *os.File, how int) error {
	if err := eintr.Flock(int(f.Fd()), how); err != nil {
		return err
	}
	var held, named unix.Stat_t
	if err := eintr.Fstat(int(f.Fd()), &held); err != nil {
		return err
	}
	err := lstatName(f.Name(), &named)
	switch {
	case errors.Is(err, unix.ENOENT) || err == nil && (named.Dev != held.Dev || named.Ino != held.Ino):
		return errSwept
	case err != nil:
		// No sign of a sweep: the file may still be there, and is removed as this run's.
		return err
	}
	return nil
}

// lstatName is the lstat of a staged copy's name; a test makes it fail, which strace cannot
// do reliably for a name that is random and a call that any thread may make.
var lstatName = eintr.Lstat

// Sweep removes from dir the staged copies, and the files SQLite made beside them, that
// runs ended without removing (killed while they staged): those of this user that no
// process holds locked. A copy a live run is making is never touched.
func Sweep(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // nothing found is nothing removed
	}
	for _, e := range entries {
		if digits, ok := strings.CutPrefix(e.Name(), stagePrefix); ok && e.Type().IsRegular() &&
			len(digits) > 0 && len(digits) <= 10 && strings.Trim(digits, "0123456789") == "" {
			sweepOne(filepath.Join(dir, e.Name()))
		}
	}
}

// sweepOne removes the staged copy at path when it is a dead run's of this user's.
func sweepOne(path string) {
	fd, err := eintr.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close() // releases the lock once the name is gone
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Nlink != 1 {
		return
	}
	if lockNamed(f, unix.LOCK_EX|unix.LOCK_NB) == nil {
		removeStaged(path)
	}
}
