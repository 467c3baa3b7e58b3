package atomicfile

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// A run that makes temp files in a folder that is not its own (a restore's DEST, an attic)
// cannot tell what a killed run left by the names: the user may keep a file of any name
// there. So each run keeps a journal in the folder, holds an exclusive flock on it for its
// life, and records every temp name in it before the temp file is made: a kill between the
// two leaves a record of a file that is not there, never a file without a record. The next
// run sweeps: for each journal a dead run of this user's left (a regular file no live run
// locks), it removes what the records name, then the journal. A journal is its Header,
// then each record followed by a NUL; a record cut short by the kill names no file that was
// made.

// JournalKind is what one kind of journal is called and how it is kept and trusted. Where
// a journal lives, how a temp name is made and which records name a temp file to remove
// are the caller's.
type JournalKind struct {
	// A journal is named Prefix, a token of 1 to 13 base-36 digits (64 random bits), Suffix.
	Prefix, Suffix string
	// Header is the journal's first line, its newline included.
	Header string
	// Sync makes the journal's name and each record durable before the temp file is made:
	// affordable for a few large copies, not for a restore of a million small files.
	Sync bool
	// CopyProof also refuses a journal with more than one link, writable by others, or whose
	// mtime is not its ctime to the nanosecond: a run's writes set both at once, whereas a
	// copy (restored from an archive, cp -a, rsync) has its mtime set apart, and the names it
	// lists prove nothing. For folders whose file system keeps such times; an attic on a FAT
	// drive does not.
	CopyProof bool
	// SweepHeaderless removes a journal that holds no more than the start of Header: a run
	// killed before it wrote it, which lists nothing. Without it such a journal is left
	// alone (its run may be about to write it).
	SweepHeaderless bool
	// Limit bounds what a sweep reads of a journal, in bytes; 0 reads all. Records past it
	// count as cut short.
	Limit int64
}

// NewToken returns 64 random bits in base 36: the part of a run's names that no one else's
// have.
func NewToken() string {
	var b [8]byte
	rand.Read(b[:]) // never fails on Linux
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:]), 36)
}

// Token returns the token of a journal's name of kind k, and whether name is one.
func (k JournalKind) Token(name string) (string, bool) {
	rest, hasPrefix := strings.CutPrefix(name, k.Prefix)
	token, hasSuffix := strings.CutSuffix(rest, k.Suffix)
	if !hasPrefix || !hasSuffix || !IsBase36(token, 13) {
		return "", false
	}
	return token, true
}

// Journal is one run's journal, open and locked.
type Journal struct {
	// Token is in the journal's name and in every temp name the run makes.
	Token string
	kind  JournalKind
	dir   int
	f     *os.File
	n     uint64
}

// Create makes a journal of kind k in the folder dirfd, under a name taken does not claim
// (nil claims none), locks it for the run's life and writes its header. The errors name the
// journal and the step.
func (k JournalKind) Create(dirfd int, taken func(name string) bool) (*Journal, error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for try := 0; ; try++ {
		token := NewToken()
		name := k.Prefix + token + k.Suffix
		if taken != nil && taken(name) {
			continue
		}
		fd, err := eintr.Openat(dirfd, name, flags, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 10 {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: name, Err: err}
		}
		j := &Journal{Token: token, kind: k, dir: dirfd, f: os.NewFile(uintptr(fd), name)}
		err = j.start()
		if errors.Is(err, errJournalGone) && try < 10 {
			j.Close()
			continue
		}
		if errors.Is(err, errJournalUnchecked) && try < 10 {
			j.Remove()
			continue
		}
		if err != nil {
			j.Remove()
			return nil, err
		}
		return j, nil
	}
}

// errJournalGone says a new journal was swept before it was locked: another run's sweep
// found it unlocked and without its header, as a killed run leaves one, and removed it.
var errJournalGone = errors.New("journal removed before it was locked")

// errJournalUnchecked says the name of a new, locked journal could not be looked up (an I/O
// error): it is still this run's (a sweep cannot take a locked journal, and no other run
// makes the same name), so it is removed before another is made.
var errJournalUnchecked = errors.New("journal's name could not be checked")

// testHookBeforeLock runs between a journal's creation and its lock, in tests only.
var testHookBeforeLock func(dirfd int, name string)

// start locks the new journal and writes its header. Between the create and the lock, a
// sweep may take the journal for a dead run's and remove it: once locked, the name must
// still be this file, or the journal would list temp files nobody could later prove.
func (j *Journal) start() error {
	name := j.Name()
	if testHookBeforeLock != nil {
		testHookBeforeLock(j.dir, name)
	}
	if err := eintr.Flock(int(j.f.Fd()), unix.LOCK_EX); err != nil {
		return &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	var mine, there unix.Stat_t
	if err := eintr.Fstat(int(j.f.Fd()), &mine); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	err := eintr.Fstatat(j.dir, name, &there, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		return errJournalUnchecked
	case err != nil || there.Dev != mine.Dev || there.Ino != mine.Ino:
		return errJournalGone
	}
	// The file's own errors name the step and the journal already.
	if _, err := io.WriteString(j.f, j.kind.Header); err != nil {
		return err
	}
	if !j.kind.Sync {
		return nil
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	if err := eintr.Fsync(j.dir); err != nil {
		return &fs.PathError{Op: "sync the folder of", Path: name, Err: err}
	}
	return nil
}

// Name is the journal's name in its folder.
func (j *Journal) Name() string { return j.f.Name() }

// Next returns the run's next unique suffix for a temp name: its token, a dash and a count
// in base 36.
func (j *Journal) Next() string {
	j.n++
	return j.Token + "-" + strconv.FormatUint(j.n, 36)
}

// Record appends the temp name tmp (synced when the kind says so); the caller makes the temp
// file only once it returns nil.
func (j *Journal) Record(tmp string) error {
	if _, err := io.WriteString(j.f, tmp+"\x00"); err != nil {
		return err
	}
	if j.kind.Sync {
		return j.f.Sync()
	}
	return nil
}

// Remove deletes the journal of a run that ended with no temp file left, and closes it. It
// returns why the journal could not be deleted: it stays, and the run's output must say so.
func (j *Journal) Remove() error {
	defer j.f.Close()
	if err := eintr.Unlinkat(j.dir, j.Name(), 0); err != nil {
		return &fs.PathError{Op: "remove", Path: j.Name(), Err: err}
	}
	return nil
}

// Close closes the journal and releases its lock, keeping it for the next run to sweep.
func (j *Journal) Close() { j.f.Close() }

// List returns the names of the journals of kind k in the folder dirfd; nil when it cannot
// be read (nothing found is nothing removed).
func (k JournalKind) List(dirfd int) []string {
	fd, err := eintr.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	var out []string
	for _, name := range names {
		if _, ok := k.Token(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// Sweep hands each record of the journal name in the folder dirfd to remove, with the
// journal's token (in every temp name its run made), and then removes the journal, when a
// dead run of this user's left it: a regular file owned by this user, that no live run
// locks, that begins with the kind's Header. Otherwise nothing is handed to remove and the
// journal stays. It reports whether it removed the journal.
func (k JournalKind) Sweep(dirfd int, name string, remove func(tmp, token string)) bool {
	token, ok := k.Token(name)
	if !ok {
		return false
	}
	f, ok := k.openDead(dirfd, name)
	if !ok {
		return false
	}
	defer f.Close() // releases the lock
	var src io.Reader = f
	if k.Limit > 0 {
		src = io.LimitReader(f, k.Limit)
	}
	r := bufio.NewReader(src)
	head, err := r.ReadString('\n')
	switch {
	case err != nil && k.SweepHeaderless && strings.HasPrefix(k.Header, head):
		return eintr.Unlinkat(dirfd, name, 0) == nil
	case err != nil || head != k.Header:
		return false // not a journal of this kind, or not yet
	}
	for {
		rec, err := r.ReadString(0)
		if err != nil {
			break // a record cut short by the kill names no file that was made
		}
		remove(strings.TrimSuffix(rec, "\x00"), token)
	}
	return eintr.Unlinkat(dirfd, name, 0) == nil
}

// openDead opens the journal name, and reports whether a dead run of this user's left it
// (see Sweep and CopyProof); the lock it then holds is released when f is closed.
func (k JournalKind) openDead(dirfd int, name string) (*os.File, bool) {
	fd, err := eintr.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	trusted := eintr.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && int(st.Uid) == os.Geteuid()
	if trusted && k.CopyProof {
		trusted = st.Nlink == 1 && st.Mode&0o022 == 0 && st.Mtim == st.Ctim
	}
	if !trusted || eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}
