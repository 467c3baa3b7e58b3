package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// Two runs that publish over the same final paths (create --force -o X, twice at once)
// would each swap in their files one by one: X could end up holding one run's archive and
// X.receipt.json the other's receipt, of an archive the second swap took out and removed.
// So a Publish that replaces takes turns with any other: it holds an exclusive flock on each
// of its new files, and on the file at each final path, from before its first rename to its
// end. A second Publish opening a final path then finds either the old file or the new one
// locked, and waits; once it holds the lock it checks that the path still names the file it
// locked. No lock file is made: only the files that are published anyway are locked.

// lockWait bounds the wait for another holder of a final path's lock. A Publish takes
// milliseconds; a lock held longer is someone else's (flock(1) on the archive), and the
// Publish then goes on without it rather than hang.
const lockWait = time.Minute

// lockFinals locks the temp file of each file Publish replaces, and the final path's file
// too unless the caller holds that lock already (Update), and returns what releases them. A
// lock that cannot be taken (no such file, a symlink, a file system without flock) is left
// out: Publish then works as it would without locks.
func lockFinals(files []*Staged, finals bool) (unlock func()) {
	var held []int
	for _, f := range files {
		if f.NoReplace {
			continue // a rename that never replaces needs no turn
		}
		paths := []string{f.Temp}
		if finals {
			paths = append(paths, f.Final)
		}
		for _, path := range paths {
			if fd, err := lockPath(path); err == nil {
				held = append(held, fd)
			}
		}
	}
	return func() {
		for _, fd := range held {
			unix.Close(fd) // releases the lock
		}
	}
}

// lockPath opens the file at path (never following a symlink, never blocking on a FIFO),
// locks it, and checks that path still names it: a file renamed away meanwhile (by the
// Publish that held the lock) is let go and the new one at path locked instead. The error
// says why it holds no lock: one that is fs.ErrNotExist means nothing is at path.
func lockPath(path string) (int, error) {
	return lockPathAs(path, unix.LOCK_EX)
}

// ReadLocked opens the file at path as lockPath does, under a shared flock: one that a
// Publish replacing it (or publishing it) holds exclusively is waited for (a minute at
// most), so that what is read beside it (its receipt) is of the same Publish, and no
// Publish starts replacing it until unlock is called. Another reader's turn is not waited
// for. The error says why it holds no lock, as lockPath's; the file is then not opened.
func ReadLocked(path string) (f *os.File, unlock func(), err error) {
	fd, err := lockPathAs(path, unix.LOCK_SH)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), path), func() { eintr.Flock(fd, unix.LOCK_UN) }, nil
}

func lockPathAs(path string, how int) (int, error) {
	deadline := time.Now().Add(lockWait)
	for {
		// Only a regular file is opened: opening a device may act on it (a tape rewinds).
		var st unix.Stat_t
		if err := eintr.Lstat(path, &st); err != nil {
			return -1, fmt.Errorf("lstat: %w", err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return -1, errNotRegular
		}
		fd, err := eintr.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("open: %w", err)
		}
		if how == unix.LOCK_SH && eintr.Flock(fd, how|unix.LOCK_NB) == unix.EWOULDBLOCK && !mayReplace(path, &st) {
			// Anyone who may read a file may flock it: a holder who cannot replace it is no
			// Publish, and a reader waiting on it a minute would wait on another's whim.
			unix.Close(fd)
			return -1, errHeldByReader
		}
		if !lockUntil(fd, how, deadline) {
			unix.Close(fd)
			return -1, errLockedLong
		}
		var mine, there unix.Stat_t
		if eintr.Fstat(fd, &mine) == nil && mine.Mode&unix.S_IFMT == unix.S_IFREG && eintr.Lstat(path, &there) == nil &&
			mine.Dev == there.Dev && mine.Ino == there.Ino {
			return fd, nil
		}
		unix.Close(fd)
		if time.Now().After(deadline) {
			return -1, errReplacedLong // go on without the lock
		}
	}
}

// mayReplace reports whether a holder of the flock on the file at path (st) may be a
// Publish replacing it: root, one with CAP_DAC_OVERRIDE, the owner of its folder, or the
// folder group- or world-writable (groups are not read), or a holder not known.
func mayReplace(path string, st *unix.Stat_t) bool {
	var dir unix.Stat_t
	if eintr.Fstatat(unix.AT_FDCWD, filepath.Dir(path), &dir, 0) != nil || dir.Mode&0o022 != 0 {
		return true
	}
	pids := FlockHolders(st)
	if len(pids) == 0 {
		return true
	}
	for _, pid := range pids {
		u, ok := ProcEUID(pid)
		if !ok || u == 0 || u == dir.Uid || ProcDACOverride(pid) {
			return true
		}
	}
	return false
}

var (
	errHeldByReader = errors.New("locked by a process that cannot replace it")
	errNotRegular   = errors.New("not a regular file")
	errLockedLong   = errors.New("another process holds it locked for over a minute")
	errReplacedLong = errors.New("replaced again and again while it was locked")
)

// lockUntil takes a flock on fd (how: LOCK_EX or LOCK_SH), polling until deadline (a blocking flock could
// not be interrupted); it reports whether it holds it.
func lockUntil(fd, how int, deadline time.Time) bool {
	for {
		err := eintr.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return true
		}
		if err != unix.EWOULDBLOCK || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Update replaces the file at path, as WriteFile does, with what data makes of the file
// there now: nil when there is none, and then unread says why when a file was there but
// could not be read (not a regular file of at most limit bytes, an I/O error, locked by
// another process for over a minute).
// That file is read under the lock a Publish takes, and held until the new one is in
// place: a value carried over from it (a metrics file's last success) is never that of a
// file another Publish replaced meanwhile, and no Publish replaces the new file with one
// made from the old.
func Update(path string, perm fs.FileMode, limit int64, data func(old []byte, unread error) []byte) error {
	var old []byte
	fd, unread := lockPath(path)
	if unread == nil {
		defer unix.Close(fd)
		old, unread = readFD(fd, limit)
	}
	if errors.Is(unread, fs.ErrNotExist) {
		unread = nil
	}
	s, err := Stage(path, data(old, unread), perm)
	if err != nil {
		return err
	}
	defer lockFinals([]*Staged{s}, false)()
	return publish([]*Staged{s})
}

// readFD reads the regular file open at fd from its start, of at most limit bytes, or says
// why not. It reads by offset: the descriptor's own offset is not for it to move.
func readFD(fd int, limit int64) ([]byte, error) {
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("fstat: %w", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, errNotRegular
	case st.Size > limit:
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	buf := make([]byte, st.Size+1) // one byte more finds a file grown past its stat
	n := 0
	for n < len(buf) {
		k, err := unix.Pread(fd, buf[n:], int64(n))
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		if k == 0 {
			break
		}
		n += k
	}
	if int64(n) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return buf[:n], nil
}
