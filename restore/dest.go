package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
)

// checkDest looks at what the destination holds at e's path and above it.
func (p *Plan) checkDest(e *archive.Entry) {
	missing, reason := p.onTheWay(e.Name)
	switch {
	case reason != "":
		p.refuse(e, reason)
		return
	case missing:
		p.noteCreated(e)
		return
	}
	if reason := p.liveLog(e); reason != "" {
		p.refuse(e, reason)
		return
	}
	st := p.lstat(e.Name)
	switch {
	case st.missing:
		p.noteCreated(e)
	case st.err != nil:
		p.refuse(e, fmt.Sprintf("cannot check it in the destination: %v", st.err))
	case e.IsDir && st.mode&fs.ModeSymlink != 0:
		p.refuse(e, "is a symlink in the destination, "+neverThrough)
	case e.IsDir && !st.mode.IsDir():
		p.refuse(e, "exists in the destination and is not a directory, "+neverReplaced)
	case e.IsDir:
		p.checkDirMeta(e)
	case !e.IsDir && st.mode.IsDir():
		p.refuse(e, "exists in the destination as a directory, "+neverReplaced)
	case !e.IsDir && p.opts.Force && !p.opts.NoUndo && isSpecial(st.mode):
		p.refuse(e, fmt.Sprintf("is a %s in the destination, which a before-state cannot hold (--no-undo replaces it)", specialKind(st.mode)))
	case !e.IsDir:
		p.checkFile(e, st)
	}
}

// liveLog says why the database snapshot e cannot be restored where DEST holds a log of
// SQLite's beside it (NAME-wal, NAME-journal) that the archive does not: SQLite would
// replay that log into the restored database the next time it is opened, and the database
// would hold the state of the live one the log came from, or a mix of both, where restore
// said it holds the archive's. With --force too: what a restore replaces, its undo can put
// back, but the log must go with the application that writes it stopped, which is the
// user's to do. "" when there is none, or e is no snapshot.
func (p *Plan) liveLog(e *archive.Entry) string {
	if p.index == nil || e.IsDir || e.Kind != "" {
		return ""
	}
	if f, ok := p.index.File(e.Name); !ok || f.Snapshot == nil {
		return ""
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		name := e.Name + suffix
		st := p.lstat(name)
		if !st.missing && st.err == nil && st.mode.IsRegular() {
			// An empty log (journal_mode=TRUNCATE's, or a -wal checkpointed with
			// TRUNCATE) holds nothing to replay.
			var size int64
			size, st.err = p.sizeAt(name)
			st.missing = st.err == nil && size == 0
		}
		switch {
		case st.missing || p.Writes(name): // the archive's own log, or one the plan removes
			continue
		case st.err != nil:
			return fmt.Sprintf("is an SQLite database, and whether the destination holds its %s, which SQLite would apply over it, cannot be checked: %v", suffix, st.err)
		default:
			return fmt.Sprintf("is an SQLite database, and the destination holds its %s (%s), which SQLite would apply over the restored database: move it away with the application that writes it stopped, or restore into another folder", suffix, format.QuoteName(name))
		}
	}
	return ""
}

// sizeAt is the size of the file DEST holds at name, read without following a link.
func (p *Plan) sizeAt(name string) (int64, error) {
	var s unix.Stat_t
	if err := p.statAt(name, &s); err != nil {
		return 0, cause(err)
	}
	return s.Size, nil
}

// statAt lstats name in DEST through its folder's descriptor, never through a link.
func (p *Plan) statAt(name string, s *unix.Stat_t) error {
	dfd, err := p.tree.dir(parentOf(name), false)
	if err != nil {
		return err
	}
	return eintr.Fstatat(dfd, baseOf(name), s, unix.AT_SYMLINK_NOFOLLOW)
}

// neverReplaced ends the refusal of an entry whose kind DEST holds otherwise (a file where
// the archive has a folder, or the reverse): --force replaces files with files only, so the
// way out is the user's.
const neverReplaced = "which a restore never replaces (move it away, or restore into another folder)"

// neverThrough ends the refusal of a folder entry where DEST holds a symlink (a folder the
// user moved elsewhere and linked): nothing is written through it, with --force or not.
const neverThrough = "which a restore never writes through (restore into another folder)"

// checkFile decides whether the file the destination holds at e's path is e's already, or
// a conflict. One that cannot be read is refused, as one whose lstat fails is, except with
// --force: that replaces it (and its before-state, which reads it too, says the error).
func (p *Plan) checkFile(e *archive.Entry, st destState) {
	present, err := p.isPresent(e, st)
	left := ""
	if !present && (err == nil || p.opts.Force) {
		left = p.leftSince(e)
	}
	switch {
	case err != nil && !p.opts.Force:
		p.refuse(e, fmt.Sprintf("cannot check it in the destination: %v", err))
	case left != "":
		p.warnings = append(p.warnings, archive.Problem{Entry: e.Name, Reason: left})
		p.left[e.Name] = true
	case !present:
		p.Conflicts = append(p.Conflicts, e.Name)
		p.replaces[e.Name] = st.id
		if p.opts.Force && !p.opts.NoUndo && st.mode.IsRegular() && st.nlink > 1 {
			p.warnings = append(p.warnings, archive.Problem{Entry: e.Name, Reason: fmt.Sprintf(errLinkSplit, st.nlink)})
		}
	}
}

// dropSplitsUndone drops the errLinkSplit warning of a file none of whose names keeps the
// old file: each is a path this restore replaces (the before-state saves them all, as one
// hard-link group its undo links again) or removes, as created by the one it undoes (a hard
// link that restore made to the file it wrote). A snapshot put back over a file of two names
// that both changed replaces both: nothing splits.
func (p *Plan) dropSplitsUndone() {
	names := map[fileID]uint64{}
	for _, c := range p.remove {
		if st := p.existing[c.Path]; c.Type == format.CreatedFile && st.err == nil && !st.missing {
			names[st.id.file]++
		}
	}
	for name, id := range p.replaces {
		if st := p.existing[name]; st.mode.IsRegular() && st.nlink > 1 {
			names[id.file]++
		}
	}
	p.warnings = slices.DeleteFunc(p.warnings, func(w archive.Problem) bool {
		st := p.existing[w.Entry]
		return w.Reason == fmt.Sprintf(errLinkSplit, st.nlink) && st.nlink == names[st.id.file]
	})
}

// errLinkSplit is the warning about a file of several names that --force replaces: its other
// names, which a before-state does not know, keep the old file, and the undo puts this name
// back as a copy of its own.
const errLinkSplit = "a hard link (%d names): replaced at this name only; its other names keep the old file, and the undo puts it back at this name as a separate copy"

// isSpecial reports whether mode is a FIFO, a device or a socket: what a backup, and so a
// before-state, skips.
func isSpecial(mode fs.FileMode) bool {
	return mode&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket|fs.ModeIrregular) != 0
}

func specialKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "FIFO"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	}
	return "special file"
}

// onTheWay checks the folders above name in the destination. It says why when one is a
// symlink, not a folder, or cannot be checked (nothing may pass through it), and whether one
// is missing (then nothing below it exists).
func (p *Plan) onTheWay(name string) (missing bool, reason string) {
	for i := strings.IndexByte(name, '/'); i >= 0; i = nextSlash(name, i) {
		dir := name[:i]
		st := p.lstat(dir)
		switch {
		case st.missing:
			return true, ""
		case st.err != nil:
			return false, fmt.Sprintf("cannot check %s in the destination: %v", format.QuoteName(dir), st.err)
		case st.mode&fs.ModeSymlink != 0:
			return false, fmt.Sprintf("would pass through %s, a symlink in the destination", format.QuoteName(dir))
		case !st.mode.IsDir():
			return false, fmt.Sprintf("would pass through %s, which is not a directory in the destination", format.QuoteName(dir))
		}
		p.through[dir] = true
	}
	return false, ""
}

// SetFolderError is NewPlan's refusal of a restore that would write into a backup set's
// folder below DEST: its LATEST replaced outside the set's lock, or new names taken for its
// runs.
type SetFolderError struct {
	Dir    string // the folder's path: DEST joined with its name in the archive
	Marker string // the file that makes it a set's
}

func (e *SetFolderError) Error() string {
	return fmt.Sprintf("%s, a folder in DEST, is a backup set (it holds %s): a restore never writes into one (restore into another folder, or leave it out with --include)", format.QuoteName(e.Dir), e.Marker)
}

// checkSets fails the plan when a folder of DEST it writes into is a backup set's
// (Options.SetMarker, asked of its descriptor). Folders the restore creates itself cannot
// be a set's, so only those the plan found are checked, once each, after the entries were
// looked at: what the plan reads of each entry is read as before, in the same order. A set
// whose every entry the plan found there already, as recorded (a home holding a set,
// restored again, or over itself), is written nothing into: the rule has nothing to guard.
func (p *Plan) checkSets() error {
	if p.tree == nil || p.opts.SetMarker == nil {
		return nil
	}
	var written map[string]bool
	for _, dir := range slices.Sorted(maps.Keys(p.through)) {
		dfd, err := p.tree.dir(dir, false)
		if err != nil {
			continue // what is written there fails where it is written, and says why
		}
		if marker := p.opts.SetMarker(dfd); marker != "" {
			if written == nil {
				written = p.writtenInto()
			}
			if written[dir] {
				return &SetFolderError{Dir: filepath.Join(p.Dest, dir), Marker: marker}
			}
		}
	}
	return nil
}

// checkHolder fails the plan with a *BusyError when DEST's flock was ignored as a reader's
// (readerHolds: its holder cannot write into DEST itself) but its holder may write into a
// folder of DEST the plan passes through: a restore of that user writing into DEST/app
// holds DEST's lock, and this one would save its half-restored files as the user's.
func (p *Plan) checkHolder() error {
	if p.tree == nil || p.opts.Lock == nil || p.opts.Lock.reader == nil {
		return nil
	}
	for _, dir := range slices.Sorted(maps.Keys(p.through)) {
		dfd, err := p.tree.dir(dir, false)
		if err != nil {
			continue // what is written there fails where it is written, and says why
		}
		if p.opts.Lock.reader.mayWrite(dfd) {
			return &BusyError{Dest: p.Dest}
		}
	}
	return nil
}

// writtenInto returns every folder of DEST the plan writes into: the folder of a path it
// creates, replaces or removes, or of one present whose metadata it sets again. Only the
// folder itself counts, not those above it: a set's own files (LATEST, its runs and their
// receipts) are in its folder, and a folder below it is none of them (a home holding the
// empty .backup.lock of a `flock` line is no set's for the files of its subfolders).
func (p *Plan) writtenInto() map[string]bool {
	folders := map[string]bool{}
	add := func(name string) {
		folders[parentOf(strings.TrimSuffix(name, "/"))] = true
	}
	for _, e := range p.creates {
		// Below a folder the restore makes (one an archive of another tool may not list),
		// what is written into is the folder DEST holds that the first one is made in.
		name := strings.TrimSuffix(e.Name, "/")
		for dir := parentOf(name); dir != "" && p.lstat(dir).missing; dir = parentOf(dir) {
			name = dir
		}
		add(name)
	}
	for _, name := range p.Conflicts {
		add(name)
	}
	for _, c := range p.remove {
		add(c.Path)
	}
	for name, fix := range p.present {
		if fix {
			add(name)
		}
	}
	for name := range p.fixDirs {
		add(name)
	}
	return folders
}

func (p *Plan) refuse(e *archive.Entry, reason string) {
	p.Refused = append(p.Refused, archive.Problem{Entry: e.StoredName(), Reason: reason})
}

// lstat says what dest holds at name. Answers are cached, and everything below a missing
// folder is missing without asking.
func (p *Plan) lstat(name string) destState {
	if st, ok := p.existing[name]; ok {
		return st
	}
	if p.existing[""].missing {
		return destState{missing: true}
	}
	if parent := parentOf(name); parent != "" && p.lstat(parent).missing {
		p.existing[name] = destState{missing: true}
		return p.existing[name]
	}
	var st destState
	var s unix.Stat_t
	err := p.statAt(name, &s)
	switch {
	case err == nil:
		st.mode, st.id, st.nlink = modeOf(&s), nodeOf(&s), uint64(s.Nlink)
	case errors.Is(err, fs.ErrNotExist):
		st.missing = true
	default:
		st.err = cause(err)
	}
	p.existing[name] = st
	return st
}

// openDest opens name in the destination for reading, relative to its folder's descriptor,
// following no symlink on the way nor at name, and never blocking on a FIFO.
func (p *Plan) openDest(name string) (*os.File, error) {
	dfd, err := p.tree.dir(parentOf(name), false)
	if err != nil {
		return nil, err
	}
	fd, err := eintr.Openat(dfd, baseOf(name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func baseOf(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}

// modeOf is the fs.FileMode of what st describes: its type and permission bits.
func modeOf(st *unix.Stat_t) fs.FileMode {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	return mode
}

// cause strips the path from an *fs.PathError: the message names the path already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
