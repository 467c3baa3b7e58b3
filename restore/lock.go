package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
)

// DestLock is an exclusive flock on the destination folder's own descriptor: one restore
// into a folder at a time, whatever path names it (a symlink to it, DEST/., a bind mount),
// so that no restore records another's files as its own in its before-state. Nothing is
// created in DEST for it, and the kernel releases it when the process ends, killed or not.
// The plan reads DEST, and Run writes into it, through this descriptor (Options.Lock): a
// folder renamed away and another made at DEST's path is not the one this restore writes
// into, and another restore may lock that one. A second lock, the user's own (lockUser),
// keeps the same user's restores apart when DEST's is ignored, held by a mere reader.
type DestLock struct {
	dest string
	fd   int // DEST's descriptor; -1 when it could not be opened (the plan says why)
	// made lists the folders LockDest made (DEST and the missing folders above it),
	// deepest first: removed again, while empty, when Run never ran.
	made []string
	used atomic.Bool
	user *userLock // nil when the user has no folder for locks (lockUser)
	// Unlocked is why the file system refused a flock on the folder (EOPNOTSUPP, ENOLCK,
	// EINVAL, EBADF); nil when the lock is held. The restore goes on without it, as before.
	Unlocked error
	// Ignored, when not nil, says that the lock was held by a process that cannot write
	// into DEST (see readerHolds): the restore goes on without it, under the user's lock
	// alone when it has one, and says so.
	Ignored error
	// reader is the holder whose lock was ignored; the plan respects it after all when
	// it may write into a folder of DEST the restore passes through (WriterBelow).
	reader *lockHolder
}

// BusyError is LockDest's error when another process holds DEST's lock.
type BusyError struct {
	Dest string
	// Full, when not "", is the user's folder of locks, in which a lock file could not be
	// made (a full or read-only file system), held by another restore of his that may write
	// elsewhere: restores run one at a time until one can be made.
	Full string
}

func (e *BusyError) Error() string {
	if e.Full != "" {
		return fmt.Sprintf("%s: another restore is running and no lock file could be made in %s, so restores run one at a time; try again when it ends",
			format.QuoteName(e.Dest), format.QuoteName(e.Full))
	}
	return fmt.Sprintf("%s: another restore is writing into it; try again when it ends", format.QuoteName(e.Dest))
}

// flockUnsupported are the errors of a file system that cannot flock a folder.
var flockUnsupported = []error{unix.EOPNOTSUPP, unix.ENOLCK, unix.EINVAL, unix.EBADF}

// LockDest makes dest when missing, opens it as the plan does (a symlink given as dest is
// followed) and takes its flock, then the user's lock on it, without waiting: a *BusyError
// when another process holds either. A dest that cannot be made or opened as a folder is not locked and no error: the plan
// or Run fails on it as before, saying why. Release must be called once the restore ends.
func LockDest(dest string) (*DestLock, error) {
	l := &DestLock{dest: dest, fd: -1}
	made, err := mkdirs(dest)
	l.made = made
	if err != nil {
		l.Release() // the folders made before the one that failed
		return &DestLock{dest: dest, fd: -1}, nil
	}
	fd, err := eintr.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		l.Release()
		return &DestLock{dest: dest, fd: -1}, nil
	}
	l.fd = fd
	err = eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	var reader *lockHolder
	switch {
	case err == nil:
	case errors.Is(err, unix.EWOULDBLOCK):
		if reader = readerHolds(fd); reader == nil {
			unix.Close(fd) // what it made, if anything, the holder now writes into
			return nil, &BusyError{Dest: dest}
		}
	case isAny(err, flockUnsupported):
		l.Unlocked = err
	default:
		l.Release()
		return nil, fmt.Errorf("%s: cannot lock it: %w", format.QuoteName(dest), err)
	}
	if l.user, err = lockUserOf(fd); err != nil {
		// The user's other restore holds DEST (and made nothing we made), or, its folder
		// of locks full, holds that folder alone while it writes elsewhere: what this one
		// made, no one writes into.
		l.Release()
		busy := &BusyError{Dest: dest}
		if full := (*folderBusyError)(nil); errors.As(err, &full) {
			busy.Full = full.dir
		}
		return nil, busy
	}
	if reader != nil {
		l.reader = reader
		l.Ignored = reader.ignored(l.user != nil)
		l.Unlocked = l.Ignored
	}
	return l, nil
}

func isAny(err error, errs []error) bool {
	for _, e := range errs {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// mkdirs makes dest and the missing folders above it, returning those it made, deepest
// first. Each is made by a mkdir of its own and counted only when that mkdir made it: a
// folder another made after it was found missing (EEXIST) is not this restore's, and
// Release must not remove it.
func mkdirs(dest string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(dest); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if err == nil {
			made = append([]string{missing[i]}, made...)
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return made, err
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil { // a folder made by another as a file, a symlink
		return made, err
	}
	return made, nil
}

// held reports whether l holds DEST's descriptor (the plan reads and Run writes through it).
func (l *DestLock) held() bool {
	return l != nil && l.fd >= 0
}

// Path is the path of the folder locked, as /proc/self/fd says now (DEST's path may lead
// elsewhere by then); "" when l holds no descriptor or its path cannot be read.
func (l *DestLock) Path() string {
	if !l.held() {
		return ""
	}
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", l.fd))
	if err != nil || !filepath.IsAbs(p) {
		return ""
	}
	return p
}

// dup returns a descriptor of the locked folder of its own (close-on-exec), or -1 when l
// holds none.
func (l *DestLock) dup() (int, error) {
	if !l.held() {
		return -1, nil
	}
	return unix.FcntlInt(uintptr(l.fd), unix.F_DUPFD_CLOEXEC, 0)
}

// Release ends the lock. The folders LockDest made are removed again, while empty, when
// no Run wrote into them: a restore refused or failed before writing leaves nothing made.
// They are removed before the lock is given up, DEST only while its path still leads to
// the folder locked.
func (l *DestLock) Release() {
	if l == nil {
		return
	}
	if !l.used.Load() && len(l.made) > 0 && l.stillAtPath() {
		for _, dir := range l.made {
			if unix.Rmdir(dir) != nil {
				break
			}
		}
	}
	l.made = nil
	l.user.release()
	l.user = nil
	if l.fd >= 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
}

// errDestMoved is Moved's cause.
var errDestMoved = errors.New("was moved or replaced while the restore held it")

// Moved fails when DEST's path no longer leads to the folder locked (renamed away, another
// made in its place): what reads DEST by its path (the before-state) would read another
// folder than the one the plan read and Run writes into. Nil without a descriptor.
func (l *DestLock) Moved() error {
	if !l.held() {
		return nil
	}
	at, err := l.atPath(0)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", format.QuoteName(l.dest), err)
	case !at:
		return fmt.Errorf("%s %w", format.QuoteName(l.dest), errDestMoved)
	}
	return nil
}

func (l *DestLock) stillAtPath() bool {
	if l.fd < 0 {
		return true // nothing opened: what was made is empty or not ours to remove
	}
	at, err := l.atPath(unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && at
}

// atPath reports whether DEST's path (followed as flags say) leads to the folder held; the
// error is the held descriptor's.
func (l *DestLock) atPath(flags int) (bool, error) {
	return sameFileAt(unix.AT_FDCWD, l.dest, flags, l.fd)
}

// readerHolds returns the holder, when DEST's flock, held by another process, is no
// restore's: anyone who may read a folder may open and flock it, and one who cannot write
// into it (not root, not its owner, the folder not group- or world-writable) would
// otherwise refuse every restore into it for as long as he liked. Nil when a holder may
// write there, or is not known (/proc unreadable, none found): its lock is respected.
func readerHolds(fd int) *lockHolder {
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil || st.Mode&0o022 != 0 {
		return nil
	}
	pids := atomicfile.FlockHolders(&st)
	if len(pids) == 0 {
		return nil
	}
	var uid uint32
	var uids, gids []uint32
	for _, pid := range pids {
		u, ok := atomicfile.ProcEUID(pid)
		if !ok || u == 0 || u == st.Uid {
			return nil
		}
		g, ok := procGroups(pid)
		if !ok {
			return nil // CAP_DAC_OVERRIDE, or its groups not known: it may write anywhere
		}
		uid = u
		uids = append(uids, u)
		gids = append(gids, g...)
	}
	return &lockHolder{pid: pids[0], uid: uid, uids: uids, gids: gids}
}

// procGroups returns the process's groups (its effective gid and supplementary groups);
// not ok when they cannot be read or when it holds CAP_DAC_OVERRIDE: such a process may
// write into any folder, as root may.
func procGroups(pid int) (gids []uint32, ok bool) {
	if atomicfile.ProcDACOverride(pid) {
		return nil, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, false
	}
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		key, rest, _ := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		switch key {
		case "Gid":
			if len(fields) < 2 {
				return nil, false
			}
			fields = fields[1:2] // the effective one
		case "Groups":
		default:
			continue
		}
		for _, f := range fields {
			g, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return nil, false
			}
			gids = append(gids, uint32(g))
		}
		found++
	}
	return gids, found == 2
}

// mayWrite reports whether a holder may write into the folder open as dfd: its owner, in
// its group when the folder is group-writable, or the folder world-writable. A folder with
// an ACL whose mask lets some entry write (the group bits) counts: the entries are not read.
func (h *lockHolder) mayWrite(dfd int) bool {
	var st unix.Stat_t
	if eintr.Fstat(dfd, &st) != nil {
		return true
	}
	if slices.Contains(h.uids, st.Uid) || st.Mode&0o002 != 0 {
		return true
	}
	if st.Mode&0o020 == 0 {
		return false
	}
	if slices.Contains(h.gids, st.Gid) {
		return true
	}
	_, err := unix.Fgetxattr(dfd, "system.posix_acl_access", nil)
	return err != unix.ENODATA && err != unix.EOPNOTSUPP
}

// lockHolder is a process holding DEST's flock that cannot write into DEST.
type lockHolder struct {
	pid int
	uid uint32
	// uids are every holder's: the plan respects the lock when any may write (mayWrite).
	uids []uint32
	// gids are every holder's groups, effective and supplementary.
	gids []uint32
}

// ignored is why the holder's lock was ignored; userLocked when the restore holds its
// user's lock (lockUser), which still keeps this user's restores apart.
func (h *lockHolder) ignored(userLocked bool) error {
	if userLocked {
		return fmt.Errorf("locked by pid %d (uid %d), which cannot write into it: ignored; this user's restores into it are still kept apart", h.pid, h.uid)
	}
	return fmt.Errorf("locked by pid %d (uid %d), which cannot write into it: restored without the lock", h.pid, h.uid)
}
