package restore

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/atomicfile"
	"backup/eintr"
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

// journals are restore's. DEST may hold a copy of a journal (restored from an archive that
// held one below DEST's level, cp -a): CopyProof. A run killed before its journal's header
// was whole left one that lists nothing, removed. Records are not synced: a restore makes a
// temp file per file.
var journals = atomicfile.JournalKind{Prefix: format.JournalPrefix, Suffix: format.JournalSuffix,
	Header: journalHeader, CopyProof: true, SweepHeaderless: true}

// journal is this run's record of its temp names, created in the folder root when the run
// makes its first temp file: a run that writes nothing (all already present) leaves DEST,
// even a read-only one, untouched.
type journal struct {
	mu   sync.Mutex // Run's workers share the journal
	root int
	held func(name string) bool // the archive's names, which the journal's must not be
	j    *atomicfile.Journal    // nil until the first temp name, or when it could not be made
	// pending holds the temp names recorded that may still exist: the journal is removed at
	// the end only when none is left.
	pending map[string]bool
	// err is why the journal could not be made; this run's temp files are then not
	// recorded, and a kill would leave them.
	err error
	// timesSet says the folders' modes and times are set: a removal now would move a
	// folder's mtime again, so what is pending stays for the next restore to sweep.
	timesSet bool
	// rootMtime is root's mtime before the journal was made in it, and made, its mtime
	// just after: finish puts the first back when nothing else moved it since.
	rootMtime, made unix.Timespec
	rootKnown       bool
}

// rootTime is the mtime of the folder fd.
func rootTime(fd int) (unix.Timespec, bool) {
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil {
		return unix.Timespec{}, false
	}
	return st.Mtim, true
}

// tempName returns a new temp name beside base ("restore" for a file or symlink being
// written, "link" for a hard link being made) in the folder dir, recorded in the journal
// first: a run killed between the two leaves a record of a file that is not there, never
// a file without a record. Unrecorded (err), it is not to be made. A journal that cannot
// be made is noted in err and the run goes on unrecorded, unless the cause stops the
// restore anyway (a full disk, a read-only file system).
func (j *journal) tempName(dir, base, kind string) (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	prefix := "." + base
	if len(prefix) > 200 {
		prefix = prefix[:200] // file names are at most 255 bytes
	}
	if j.j == nil && j.err == nil {
		before, ok := rootTime(j.root)
		var err error
		if j.j, err = journals.Create(j.root, j.held); isFatal(err) {
			return "", err
		} else if err != nil {
			j.err = err
		}
		if j.j != nil && ok {
			j.rootMtime = before
			j.made, j.rootKnown = rootTime(j.root)
		}
	}
	if j.j == nil {
		return prefix + "." + kind + "-" + atomicfile.NewToken(), nil
	}
	tmp := prefix + "." + kind + "-" + j.j.Next()
	if err := j.j.Record(joinName(dir, tmp)); err != nil {
		return "", fmt.Errorf("record temp name in %s: %w", j.j.Name(), err)
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
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.pending, joinName(dir, tmp))
}

// retry removes the temp names still pending (a removal that failed during the run) before
// the folders' modes and times are set: a removal after that would move a folder's mtime
// again (see timesSet). What it cannot remove stays pending, for finish to report.
func (j *journal) retry(t *destTree) {
	for _, name := range slices.Sorted(maps.Keys(j.pending)) {
		if removeTemp(t, name) == nil {
			j.mu.Lock()
			delete(j.pending, name)
			j.mu.Unlock()
		}
	}
}

// finish ends the journal of a run (topChanged: the run made, replaced or removed a name in
// DEST's top folder): the temp names still pending (a removal that failed)
// are removed if they are still there, unless the folders' times are set; the journal itself is removed when none is left, and
// kept otherwise, for the next restore into DEST to sweep. It returns what it leaves in
// DEST, as warnings: the temp files left, or the journal that could not be removed.
func (j *journal) finish(t *destTree, topChanged bool) []archive.Problem {
	if j.j == nil {
		return nil
	}
	if !j.timesSet {
		j.retry(t)
	}
	left := slices.Sorted(maps.Keys(j.pending))
	if len(left) == 0 {
		name := j.j.Name()
		// The journal's making and removal are this run's only changes to DEST's top folder
		// when its plan changes nothing there and its mtime has not moved since the journal
		// was made: it gets its mtime back, which no before-state can hold (an undo puts
		// everything else back).
		now, ok := rootTime(j.root)
		unmoved := !topChanged && ok && j.rootKnown && now == j.made
		err := j.j.Remove()
		j.j = nil
		if err != nil {
			return []archive.Problem{{Entry: name, Reason: fmt.Sprintf("the journal of this run's temp files could not be removed (%v); it lists none left", cause(err))}}
		}
		if unmoved {
			ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, j.rootMtime}
			eintr.Futimens(j.root, &ts) // DEST not the user's own (EPERM): it keeps the time
		}
		return nil
	}
	j.j.Close() // releases the lock: the next run sweeps what it lists
	j.j = nil
	return []archive.Problem{{Entry: left[0], Reason: fmt.Sprintf(
		"a temp file (of %d) could not be removed; the journal that lists them stays, for the next restore into DEST to remove them", len(left))}}
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
	for _, name := range journals.List(t.root) {
		if p.holds(name) {
			continue
		}
		journals.Sweep(t.root, name, func(tmp, token string) {
			if isTempOf(tmp, token) && !p.holds(tmp) {
				sweepTemp(t, tmp)
			}
		})
	}
}

// sweepTemp removes a temp file a killed run recorded, as removeTemp does. One that is
// another name of a file (a killed run's link of a hard-link group, .NAME.link-*) moves that
// file's ctime as it goes, which the check of a name the plan saw holding the file would take
// for someone's change: the change is this restore's own, recorded as taking a name of a
// file is (see replacedSince).
func sweepTemp(t *destTree, name string) {
	dfd, err := t.dir(parentOf(name), false)
	if err != nil {
		return
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	fd, err := eintr.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		removeTemp(t, name)
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if eintr.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 {
		removeTemp(t, name)
		return
	}
	before := nodeOf(&st)
	if removeTemp(t, name) != nil {
		return
	}
	if after, err := fdID(fd); err == nil && after.file == before.file && after != before {
		t.replaceMu.Lock()
		t.replaced[before] = after
		t.replaceMu.Unlock()
	}
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
	if eintr.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || int(st.Uid) != os.Geteuid() {
		return nil
	}
	if m := st.Mode & unix.S_IFMT; m == unix.S_IFREG || m == unix.S_IFLNK {
		return eintr.Unlinkat(dfd, base, 0)
	}
	return nil
}
