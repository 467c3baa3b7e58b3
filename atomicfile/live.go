package atomicfile

import (
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// A run's temp files sit in folders another run may be backing up at the same time (two
// jobs whose archives go to /var/backups, each backing up /). That run would store the
// half-written file, a copy of an archive as junk, with a warning that it changed while
// read. So each temp file a run writes is made with an exclusive flock, held on its own
// descriptor until it is closed (before it is published, so that Publish's own locks never
// wait for it), and a walk leaves out a file named as a temp file that a run holds so.

// CreateTemp makes a temp file beside the final name base in dir, named by TempPattern, and
// holds an exclusive flock on it while it is open: the mark of a file a run is writing
// (HeldByRun). Where flock is not supported the file is made without the mark. Another
// run's walk may probe the new file between its create and the lock (HeldByRun's shared
// flock, let go at once): the lock is tried again until markWait, or the whole file would
// be written unheld, and stored by that run as any file.
func CreateTemp(dir, base string) (*os.File, error) {
	f, err := eintr.CreateTemp(dir, TempPattern(base))
	if err != nil {
		return nil, err
	}
	Mark(f)
	return f, nil
}

// Mark takes the exclusive flock on a temp file a run has just made, as CreateTemp does, for
// a temp file made otherwise (a journal's, named by IsRunTempName).
func Mark(f *os.File) {
	deadline := time.Now().Add(markWait)
	for eintr.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == unix.EWOULDBLOCK && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// markWait bounds CreateTemp's wait for a probe to let its new file go: a probe takes
// microseconds, and a run never waits long on what holds a file for longer (the user's own
// flock(1) on a name like a temp's).
const markWait = 2 * time.Second

// IsTempName reports whether name is one that TempPattern gives: a dot, a name, TempInfix
// and the 1 to 10 decimal digits os.CreateTemp puts for its star.
func IsTempName(name string) bool {
	i := strings.LastIndex(name, TempInfix)
	if i < 1 || name[0] != '.' {
		return false
	}
	digits := name[i+len(TempInfix):]
	return len(digits) > 0 && len(digits) <= 10 && strings.Trim(digits, "0123456789") == ""
}

// IsRunTempName reports whether name is one a run gives a temp file it marks: TempPattern's
// (IsTempName) or a journal's (TempInfix, the run's token, a dash and a count, in base 36:
// see Journal.Next), as prune --attic names its copies.
func IsRunTempName(name string) bool {
	if IsTempName(name) {
		return true
	}
	i := strings.LastIndex(name, TempInfix)
	if i < 1 || name[0] != '.' {
		return false
	}
	token, count, ok := strings.Cut(name[i+len(TempInfix):], "-")
	return ok && IsBase36(token, 13) && IsBase36(count, 13)
}

// IsBase36 says whether s is 1 to max base-36 digits, as a run's token and counts are.
func IsBase36(s string, max int) bool {
	return len(s) > 0 && len(s) <= max && strings.Trim(s, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
}

// HeldByRun reports whether another open file holds an exclusive flock on f, as CreateTemp
// takes on a run's temp file while the run writes it. Its probe, a shared flock, is let go at
// once.
func HeldByRun(f *os.File) bool {
	fd := int(f.Fd())
	err := eintr.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		eintr.Flock(fd, unix.LOCK_UN)
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}
