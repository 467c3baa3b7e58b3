package backupset

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
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
)

// atticJournals are the journals of prune --attic. The attic is often another file system
// (a drive that may keep neither owners' modes nor ctimes, so no CopyProof): each record is
// synced, as the copy it names will be. A sweep reads at most 1 MiB of one: a run records
// two names. Without SweepHeaderless, a journal whose run was killed before it wrote the
// header stays (restore's are removed): kept as it was when this moved to atomicfile.
var atticJournals = atomicfile.JournalKind{Prefix: atticJournalPrefix, Suffix: atticJournalSuffix,
	Header: atticJournalHeader, Sync: true, Limit: 1 << 20, SweepHeaderless: true}

// atticJournal is one prune's record of the temp names it makes in the attic; created with
// the first temp file, so that a prune that renames (or moves nothing) writes nothing more.
type atticJournal struct {
	dir   string
	dirfd int // open while j is
	j     *atomicfile.Journal
}

// open creates the journal, locks it for the run's life and makes its name durable.
func (j *atticJournal) open() error {
	fd, err := eintr.Open(j.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("journal in %s: %w", j.dir, &fs.PathError{Op: "open", Path: j.dir, Err: err})
	}
	if j.j, err = atticJournals.Create(fd, nil); err != nil {
		unix.Close(fd)
		return fmt.Errorf("journal in %s: %w", j.dir, err)
	}
	j.dirfd = fd
	return nil
}

// createTemp records a new temp name for the file name and then creates it (a kill between
// the two leaves a record of a file that is not there, never a file without a record).
func (j *atticJournal) createTemp(name string) (*os.File, error) {
	if j.j == nil {
		if err := j.open(); err != nil {
			return nil, err
		}
	}
	tmp := "." + name + atomicfile.TempInfix + j.j.Next()
	if err := j.j.Record(tmp); err != nil {
		return nil, fmt.Errorf("record %s in the attic's journal: %w", tmp, err)
	}
	f, err := eintr.OpenFile(filepath.Join(j.dir, tmp), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err == nil {
		atomicfile.Mark(f) // a run backing up a tree the attic is in leaves it out
	}
	return f, err
}

// close removes the journal of a run that ended: its temp files are gone (each copy removes
// its own).
func (j *atticJournal) close() {
	if j.j == nil {
		return
	}
	j.j.Remove()
	unix.Close(j.dirfd)
	j.j = nil
}

// sweepAttic removes what killed prunes left in the attic dir: for each journal there that
// this user wrote and no live run locks, the temp files it lists that are still there, then
// the journal. Anything else in dir is never touched. It returns the names it removed.
func sweepAttic(dir string) []string {
	fd, err := eintr.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // nothing found is nothing removed
	}
	defer unix.Close(fd)
	var removed []string
	for _, name := range atticJournals.List(fd) {
		swept := atticJournals.Sweep(fd, name, func(tmp, token string) {
			if isAtticTemp(tmp, token) && removeRegular(filepath.Join(dir, tmp)) {
				removed = append(removed, tmp)
			}
		})
		if swept {
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		atomicfile.SyncDir(dir)
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
	return atomicfile.IsBase36(tmp[i+len(mark):], 13)
}

// removeRegular removes the regular file at path (never a folder, a link's target or
// anything else) and says whether it did.
func removeRegular(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular() && eintr.Remove(path) == nil
}
