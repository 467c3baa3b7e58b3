package backupset

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
)

// A prune --attic killed while it copies a run into an attic on another file system leaves
// its temp file there. The attic is the user's folder, so a name proves nothing (a user may
// keep ".app-….zip.tmp-1" there): each prune that copies keeps a journal in the attic,
// ".backup-attic-<token>.journal", and records every temp name in it before the temp file
// is made. The next prune --attic into that folder removes what the journals of dead runs
// list, then the journals. A live run holds an exclusive flock on its journal, so a prune of
// another set into the same attic leaves it alone.

const (
	atticJournalPrefix = ".backup-attic-"
	atticJournalSuffix = ".journal"
	atticJournalHeader = "backup attic journal 1\n"
	// atticJournalLimit bounds what a sweep reads of a journal: a run records two names.
	atticJournalLimit = 1 << 20
)

// atticJournal is one prune's record of the temp names it makes in the attic; created with
// the first temp file, so that a prune that renames (or moves nothing) writes nothing more.
type atticJournal struct {
	dir   string
	f     *os.File
	token string // in every temp name this run makes
	n     uint64
}

// newAtticToken returns 64 random bits in base 36: the part of this run's names that no one
// else's have.
func newAtticToken() string {
	var b [8]byte
	rand.Read(b[:]) // never fails on Linux
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:]), 36)
}

// open creates the journal, locks it for the run's life and makes its name durable.
func (j *atticJournal) open() error {
	const flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL | unix.O_NOFOLLOW
	for try := 0; ; try++ {
		token := newAtticToken()
		f, err := os.OpenFile(filepath.Join(j.dir, atticJournalPrefix+token+atticJournalSuffix), flags, 0o600)
		if errors.Is(err, os.ErrExist) && try < 10 {
			continue
		}
		if err != nil {
			return err
		}
		j.f, j.token = f, token
		break
	}
	err := unix.Flock(int(j.f.Fd()), unix.LOCK_EX)
	if err == nil {
		_, err = io.WriteString(j.f, atticJournalHeader)
	}
	if err == nil {
		err = j.f.Sync()
	}
	if err == nil {
		err = atomicfile.SyncDir(j.dir)
	}
	if err != nil {
		j.close()
		return fmt.Errorf("journal in %s: %w", j.dir, err)
	}
	return nil
}

// createTemp records a new temp name for the file name and then creates it (a kill between
// the two leaves a record of a file that is not there, never a file without a record).
func (j *atticJournal) createTemp(name string) (*os.File, error) {
	if j.f == nil {
		if err := j.open(); err != nil {
			return nil, err
		}
	}
	j.n++
	tmp := "." + name + atomicfile.TempInfix + j.token + "-" + strconv.FormatUint(j.n, 36)
	if _, err := io.WriteString(j.f, tmp+"\x00"); err != nil {
		return nil, fmt.Errorf("record %s in the attic's journal: %w", tmp, err)
	}
	if err := j.f.Sync(); err != nil {
		return nil, fmt.Errorf("record %s in the attic's journal: %w", tmp, err)
	}
	return os.OpenFile(filepath.Join(j.dir, tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
}

// close removes the journal of a run that ended: its temp files are gone (each copy removes
// its own).
func (j *atticJournal) close() {
	if j.f == nil {
		return
	}
	os.Remove(j.f.Name())
	j.f.Close()
	j.f = nil
}

// sweepAttic removes what killed prunes left in the attic dir: for each journal there that
// this user wrote and no live run locks, the temp files it lists that are still there, then
// the journal. Anything else in dir is never touched. It returns the names it removed.
func sweepAttic(dir string) []string {
	names, err := readDirNames(dir)
	if err != nil {
		return nil // nothing found is nothing removed
	}
	var removed []string
	for _, name := range names {
		if token, ok := atticJournalToken(name); ok {
			removed = append(removed, sweepAtticJournal(dir, name, token)...)
		}
	}
	if len(removed) > 0 {
		atomicfile.SyncDir(dir)
	}
	return removed
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// atticJournalToken returns the token of a journal's name, and whether name is one: the
// prefix, 1 to 13 base-36 digits (64 bits), the suffix.
func atticJournalToken(name string) (string, bool) {
	rest, hasPrefix := strings.CutPrefix(name, atticJournalPrefix)
	token, hasSuffix := strings.CutSuffix(rest, atticJournalSuffix)
	if !hasPrefix || !hasSuffix || !isBase36(token, 13) {
		return "", false
	}
	return token, true
}

// isBase36 says whether s is 1 to max base-36 digits.
func isBase36(s string, max int) bool {
	return len(s) > 0 && len(s) <= max && strings.Trim(s, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
}

// sweepAtticJournal removes the temp files one dead run's journal lists, then the journal.
// A journal that is not a regular file of this user's, that a live run locks, or that does
// not begin with the header (its run may be about to write it) is left alone.
func sweepAtticJournal(dir, name, token string) []string {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil // a live run's
	}
	data, err := io.ReadAll(io.LimitReader(f, atticJournalLimit))
	if err != nil || !bytes.HasPrefix(data, []byte(atticJournalHeader)) {
		return nil
	}
	var removed []string
	recs := strings.Split(string(data[len(atticJournalHeader):]), "\x00")
	// The last piece follows the last NUL: a record cut short names no file that was made.
	for _, tmp := range recs[:len(recs)-1] {
		if isAtticTemp(tmp, token) && removeRegular(filepath.Join(dir, tmp)) {
			removed = append(removed, tmp)
		}
	}
	if os.Remove(path) == nil {
		removed = append(removed, name)
	}
	return removed
}

// isAtticTemp says whether tmp is a temp name of the run with token: "." + the name of a
// set's file + ".tmp-" + token + "-" + a base-36 count, in the attic itself.
func isAtticTemp(tmp, token string) bool {
	mark := atomicfile.TempInfix + token + "-"
	i := strings.LastIndex(tmp, mark)
	if !strings.HasPrefix(tmp, ".") || strings.ContainsRune(tmp, '/') || i < 2 {
		return false
	}
	return isBase36(tmp[i+len(mark):], 13)
}

// removeRegular removes the regular file at path (never a folder, a link's target or
// anything else) and says whether it did.
func removeRegular(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular() && os.Remove(path) == nil
}
