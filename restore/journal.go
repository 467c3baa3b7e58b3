package restore

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/format"
)

// A restore killed while it wrote (SIGKILL, a power cut) leaves its temp files behind. A
// name proves nothing (an archive or a user may hold ".notes.restore-old"), so each restore
// keeps a journal in DEST's top folder, ".backup-restore-<token>.journal", and records every
// temp name in it before the temp file is made. The next restore into DEST (its undo
// included) removes what the journals of dead runs list, then the journals. A live run
// holds an exclusive flock on its journal, so a concurrent restore leaves it alone.

// journalHeader is a journal's first line; its name is format's (format.JournalToken).
const journalHeader = "backup restore journal 1\n"

// journal is this run's record of its temp names, created in the folder root when the run
// makes its first temp file: a run that writes nothing (all already present) leaves DEST,
// even a read-only one, untouched.
type journal struct {
	root  int
	held  func(name string) bool // the archive's names, which the journal's must not be
	f     *os.File               // nil until the first temp name, or when it could not be made
	name  string                 // in DEST's top folder
	token string                 // in every temp name this run makes
	n     uint64
	// pending holds the temp names recorded that may still exist: the journal is removed at
	// the end only when none is left.
	pending map[string]bool
	// err is why the journal could not be made; this run's temp files are then not
	// recorded, and a kill would leave them.
	err error
}

// newToken returns 64 random bits in base 36: the part of this run's names that no one
// else's have.
func newToken() string {
	var b [8]byte
	rand.Read(b[:]) // never fails on Linux
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:]), 36)
}

// open creates the journal under a name the archive does not hold, and locks it for the
// run's life.
func (j *journal) open() error {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for try := 0; ; try++ {
		token := newToken()
		name := format.JournalPrefix + token + format.JournalSuffix
		if j.held(name) {
			continue
		}
		fd, err := unix.Openat(j.root, name, flags, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 10 {
			continue
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		j.f, j.name, j.token = os.NewFile(uintptr(fd), name), name, token
		if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
			j.remove()
			return fmt.Errorf("lock %s: %w", name, err)
		}
		if _, err := io.WriteString(j.f, journalHeader); err != nil {
			j.remove()
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
}

// remove deletes the journal of a run that ended: its temp files are gone.
func (j *journal) remove() {
	if j.f == nil {
		return
	}
	unix.Unlinkat(j.root, j.name, 0)
	j.f.Close()
	j.f = nil
}

// tempName returns a new temp name beside base ("restore" for a file or symlink being
// written, "link" for a hard link being made) in the folder dir, recorded in the journal
// first: a run killed between the two leaves a record of a file that is not there, never
// a file without a record. Unrecorded (err), it is not to be made. A journal that cannot
// be made is noted in err and the run goes on unrecorded, unless the cause stops the
// restore anyway (a full disk, a read-only file system).
func (j *journal) tempName(dir, base, kind string) (string, error) {
	prefix := "." + base
	if len(prefix) > 200 {
		prefix = prefix[:200] // file names are at most 255 bytes
	}
	if j.f == nil && j.err == nil {
		if err := j.open(); isFatal(err) {
			return "", err
		} else if err != nil {
			j.err = err
		}
	}
	if j.f == nil {
		return prefix + "." + kind + "-" + newToken(), nil
	}
	j.n++
	tmp := prefix + "." + kind + "-" + j.token + "-" + strconv.FormatUint(j.n, 36)
	if _, err := io.WriteString(j.f, joinName(dir, tmp)+"\x00"); err != nil {
		return "", fmt.Errorf("record temp name in %s: %w", j.name, err)
	}
	if j.pending == nil {
		j.pending = map[string]bool{}
	}
	j.pending[joinName(dir, tmp)] = true
	return tmp, nil
}

// settle notes that the temp name tmp in the folder dir is gone (renamed into place or
// removed), or is not this run's to remove.
func (j *journal) settle(dir, tmp string) {
	delete(j.pending, joinName(dir, tmp))
}

// finish ends the journal of a run: the temp names still pending (a removal that failed)
// are removed if they are still there; the journal itself is removed when none is left, and
// kept otherwise, for the next restore into DEST to sweep. It returns the names left.
func (j *journal) finish(t *destTree) []string {
	if j.f == nil {
		return nil
	}
	var left []string
	for name := range j.pending {
		if removeTemp(t, name) != nil {
			left = append(left, name)
		}
	}
	if len(left) == 0 {
		j.remove()
		return nil
	}
	j.f.Close() // releases the lock: the next run sweeps what it lists
	j.f = nil
	slices.Sort(left)
	return left
}

func joinName(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// sweep removes what killed restores left in the destination: for each journal in its top
// folder that this user wrote, that the archive does not hold and that no live run locks,
// the temp files it lists that are still there, then the journal itself.
func (p *Plan) sweep(t *destTree) {
	names, err := readNames(t.root)
	if err != nil {
		return // nothing found is nothing removed
	}
	for _, name := range names {
		if token, ok := format.JournalToken(name); ok && !p.holds(name) {
			p.sweepJournal(t, name, token)
		}
	}
}

func readNames(dfd int) ([]string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}

// holds reports whether the archive has an entry of that name: never a temp file to remove.
func (p *Plan) holds(name string) bool {
	if p.entryNames == nil {
		p.entryNames = make(map[string]bool, len(p.r.Entries))
		for _, e := range p.r.Entries {
			p.entryNames[e.Name] = true
		}
	}
	return p.entryNames[name]
}

func (p *Plan) sweepJournal(t *destTree, name, token string) {
	f, ok := openOwnJournal(t.root, name)
	if !ok {
		return
	}
	defer f.Close()
	r := bufio.NewReader(f)
	head, err := r.ReadString('\n')
	switch {
	case err != nil && strings.HasPrefix(journalHeader, head):
		// Killed before its header was whole (even empty): it lists nothing.
		unix.Unlinkat(t.root, name, 0)
		return
	case err != nil || head != journalHeader:
		return // not a journal this tool wrote
	}
	for {
		rec, err := r.ReadString(0)
		if err != nil {
			break // a record cut short by the kill names no file that was made
		}
		if tmp := strings.TrimSuffix(rec, "\x00"); isTempOf(tmp, token) && !p.holds(tmp) {
			removeTemp(t, tmp)
		}
	}
	unix.Unlinkat(t.root, name, 0)
}

// openOwnJournal opens the journal name, and reports whether it is one a dead run of this
// user left: a regular file of one link, owned by this user, writable by no one else, and
// not locked by a live run (the lock then held is released when f is closed). Its mtime
// must be its ctime, to the nanosecond: the run's writes set both at once, whereas a copy of
// a journal (restored from an archive that held one below DEST's level, cp -a, rsync) has
// its mtime set apart, and the names it lists prove nothing.
func openOwnJournal(root int, name string) (*os.File, bool) {
	fd, err := unix.Openat(root, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 ||
		int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 || st.Mtim != st.Ctim ||
		unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// isTempOf reports whether name is a safe relative path whose last component is a temp
// name of the run that made token.
func isTempOf(name, token string) bool {
	if archive.CheckName(name, archive.HostUnix) != nil {
		return false
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	for _, kind := range []string{".restore-", ".link-"} {
		i := strings.LastIndex(base, kind+token+"-")
		if i <= 0 || base[0] != '.' {
			continue
		}
		if n := base[i+len(kind)+len(token)+1:]; n != "" && strings.Trim(n, "0123456789abcdefghijklmnopqrstuvwxyz") == "" {
			return true
		}
	}
	return false
}

// removeTemp removes a temp file a run recorded, if it is still a regular file or a
// symlink of this user's. It fails when such a file is still there.
func removeTemp(t *destTree, name string) error {
	dfd, err := t.dir(parentOf(name), false)
	if err != nil {
		return nil // its folder is gone, or no longer reached from DEST
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	var st unix.Stat_t
	if unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || int(st.Uid) != os.Geteuid() {
		return nil
	}
	if m := st.Mode & unix.S_IFMT; m == unix.S_IFREG || m == unix.S_IFLNK {
		return unix.Unlinkat(dfd, base, 0)
	}
	return nil
}
