package restore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
)

// Result is what Run did.
type Result struct {
	// Files, Dirs, Symlinks and Bytes count what was restored.
	Files, Dirs, Symlinks int
	Bytes                 int64
	// Present counts the files the destination held already with the recorded content:
	// kept, not written (their owner, mode and mtime set where they differed; one whose fix
	// failed is in Failed instead).
	Present int
	// Removed counts the paths removed because the archive, the before-state of a restore,
	// records that restore created them.
	Removed int
	// Damaged lists the entries whose data failed a check (CRC-32, size, SHA-256, or missing
	// from the archive): none of them was written.
	Damaged []archive.Problem
	// Failed lists the entries that could not be written (the cause is the destination's,
	// not the archive's).
	Failed []archive.Problem
	// Warnings lists what was restored less faithfully than recorded: extended attributes
	// that could not be set, hard links restored as separate files.
	Warnings []archive.Problem
}

// bufSize is the buffer each file is streamed through: memory stays this, whatever the size
// of the file.
const bufSize = 128 << 10

// fatalErrnos stop a restore: every entry after the first would fail the same way.
var fatalErrnos = []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS}

// Run restores the plan's entries into the destination, creating it when missing. Each file
// is written, unnamed or to a temp file beside its target, through
// archive.Reader.CopyChecked (checked as verify checks it: the manifest's SHA-256, the CRC-32
// of a foreign archive's entry), and only then linked or renamed into place; directories
// get their mode and mtime once their contents are in. Problems with single entries are in
// the result; the error is for what stops the restore (a full disk, ctx done). Run must not
// be called unless OK.
func (p *Plan) Run(ctx context.Context) (res *Result, err error) {
	if !p.OK() {
		return nil, errors.New("restore refused")
	}
	if p.opts.Lock.held() {
		p.opts.Lock.used.Store(true) // what it made is DEST now, kept as a restore keeps it
	} else if err := os.MkdirAll(p.Dest, 0o755); err != nil {
		return nil, danglingDest(p.Dest, err)
	}
	p.umask = currentUmask()
	t, err := openDestTree(p.Dest, p.mkdirMode, p.opts.Lock)
	if err != nil {
		return nil, err
	}
	defer t.close()
	p.sweep(t)
	res = &Result{Damaged: slices.Clone(p.Damaged)}
	t.journal = &journal{root: t.root, held: p.holds}
	defer func() { res.Warnings = append(res.Warnings, t.journal.finish(t, p.changesTop())...) }()
	// On every return, also a full disk's or an interrupt's: what was restored keeps its
	// warnings (the folders' attributes, set last, warn too).
	defer func() { res.Warnings = append(res.Warnings, p.warnings...) }()
	// What the restore undone created goes first: removing only frees room, and a restore
	// that filled the disk leaves none for the files its undo puts back.
	if err := p.removeCreated(ctx, t, res); err != nil {
		return res, err
	}
	stop := p.restoreAll(ctx, t, res)
	// Also when a full disk or an interrupt stopped the workers: the members of a group
	// they wrote are linked now or never, since a run again keeps them, found in place, as
	// files of their own.
	p.relink(t, res)
	if stop != nil {
		return res, stop
	}
	t.journal.retry(t)
	if err := p.setDirTimes(t, res); err != nil {
		return res, err
	}
	t.journal.timesSet = true
	if err := t.journal.err; err != nil {
		res.Warnings = append(res.Warnings, archive.Problem{Reason: fmt.Sprintf("no journal of temp files: %v (had this run been killed, its temp files would have stayed)", err)})
	}
	return res, nil
}

// changesTop says whether the plan makes, replaces or removes a name in DEST's top folder
// itself, which moves its mtime.
func (p *Plan) changesTop() bool {
	for _, name := range slices.Concat(p.Conflicts, p.Removes) {
		if !strings.Contains(name, "/") {
			return true
		}
	}
	for _, e := range p.creates {
		if top, _, _ := strings.Cut(e.Name, "/"); top == e.Name || p.missingInDest(top) {
			return true
		}
	}
	return false
}

// mkdirMode is the mode a folder is made with: owner-only for an archived folder until its
// own mode is set at the end (so that it can be filled even when that mode is read-only);
// what mkdir -p gives for a folder the archive does not hold.
func (p *Plan) mkdirMode(name string) uint32 {
	if _, ok := p.dirs[name]; ok {
		return 0o700
	}
	return 0o777
}

func (p *Plan) restoreEntry(ctx context.Context, t *destTree, e *archive.Entry, res *Result, buf []byte, span *archive.Span) error {
	if e.IsDir {
		if _, err := t.dir(e.Name, true); err != nil {
			if isFatal(err) { // a full inode table fails every folder after it too
				return fmt.Errorf("%s: %w", format.QuoteName(e.StoredName()), err)
			}
			res.Failed = append(res.Failed, archive.Problem{Entry: e.StoredName(), Reason: err.Error()})
			return nil
		}
		res.Dirs++
		return nil
	}
	if fix, ok := p.present[e.Name]; ok {
		return p.keepPresent(t, e, fix, res)
	}
	if e.Kind != "" {
		return p.restoreSymlink(ctx, t, e, res)
	}
	n, err := p.writeFile(ctx, t, e, buf, span)
	var we *writeError
	switch {
	case err == nil:
		// In place, so counted, even when ctx is done by now: the count says what DEST holds.
		res.Files++
		res.Bytes += n
		p.done.Add(1)
		p.restored(e)
		return ctx.Err()
	case ctx.Err() != nil:
		return ctx.Err()
	case isFatal(err):
		return fmt.Errorf("%s: %w", format.QuoteName(e.Name), err)
	case errors.As(err, &we), errors.As(err, new(*fileOpError)):
		res.Failed = append(res.Failed, archive.Problem{Entry: e.Name, Reason: err.Error()})
	default:
		res.Damaged = append(res.Damaged, archive.Problem{Entry: e.Name, Reason: err.Error()})
	}
	return nil
}

func isFatal(err error) bool {
	return slices.ContainsFunc(fatalErrnos, func(target error) bool { return errors.Is(err, target) })
}

// fileOpError is a failure of the destination: creating, chmod-ing or renaming a file.
type fileOpError struct{ err error }

func (e *fileOpError) Error() string { return e.err.Error() }
func (e *fileOpError) Unwrap() error { return e.err }

// writeFile writes e through CopyChecked (read through span, the run of neighbours that
// holds it), unnamed when it replaces nothing (see unnamed.go), else to a temp file in its
// folder, sets its mode and mtime, and links or renames it into place once its data are
// checked.
func (p *Plan) writeFile(ctx context.Context, t *destTree, e *archive.Entry, buf []byte, span *archive.Span) (int64, error) {
	dirName, base := parentOf(e.Name), e.Name[strings.LastIndexByte(e.Name, '/')+1:]
	dfd, err := t.dir(dirName, true)
	if err != nil {
		return 0, &fileOpError{err}
	}
	old := p.replacing(e.Name)
	if t.unnamed.Load() && old == nil {
		if n, ok, err := p.writeUnnamed(ctx, t, e, buf, span, dirName, dfd, base); ok {
			return n, err
		}
	}
	f, tmp, err := t.createTemp(dirName, dfd, base)
	if err != nil {
		return 0, &fileOpError{removedDir(dirName, dfd, err)}
	}
	// Held open until the file is in place, so that its inode number cannot pass to a file
	// someone else puts at its temp name or its name meanwhile.
	made, err := holdFile(f)
	if err != nil {
		f.Close()
		t.dropTemp(dirName, dfd, tmp, err)
		return 0, err
	}
	defer unix.Close(made.fd)
	n, err := p.r.CopyCheckedIn(span, &progressWriter{ctx: ctx, w: f, n: &p.written}, e, buf)
	if err == nil {
		err = p.finish(int(f.Fd()), nil, e)
	}
	if err == nil && p.grantsPrivilege(e) {
		err = p.checkUnwritten(f, e)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = &fileOpError{cerr}
	}
	if err == nil {
		err = t.checkedRename(dirName, dfd, tmp, base, made.id, old)
		p.mark(dirName)
	}
	if err != nil {
		t.dropTemp(dirName, dfd, tmp, err)
		return 0, err
	}
	if err := p.placeWritten(dfd, base, e, made.fd, made.id); err != nil {
		return 0, err
	}
	return n, nil
}

// placeWritten records, for relink to link the other names of its group to, the file the
// name base in the folder dfd holds now (the rename or link changed its ctime), and only if
// that is the file written, made, which a descriptor of this run still holds, so that its
// inode number cannot have passed to another file: whoever may write in the folder may
// have removed or replaced it since. The ctime an fstat of the descriptor gives after a
// removal could be a new file's too (attack pass 17). A file of a hard-link group also gets
// its file handle recorded (see Plan.handles), taken from fd, the descriptor of the file
// written: taken by name, it was missing when the name was removed just after the check
// above, and relink then trusted the ctime alone, which a file given the freed inode number
// in the same clock tick has too. A lookup that fails for another reason than a missing
// name (an I/O error) is that error: it says nothing of a swap.
func (p *Plan) placeWritten(dfd int, base string, e *archive.Entry, fd int, made fileID) error {
	id, err := statID(dfd, base)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		return &fileOpError{fmt.Errorf("cannot check it at its name once placed: lstat: %w", err)}
	case err != nil || id.file != made:
		return &fileOpError{errReplaced}
	}
	if !p.place(e, id) {
		return nil
	}
	if h, err := handleOf(fd, ""); err == nil {
		p.mu.Lock()
		p.handles[e.Name] = h
		p.mu.Unlock()
	}
	return nil
}

// heldFile is a second descriptor of a file this run made, and the file's identity.
type heldFile struct {
	fd int
	id fileID
}

func holdFile(f *os.File) (heldFile, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return heldFile{}, &fileOpError{err}
	}
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return heldFile{}, &fileOpError{err}
	}
	return heldFile{fd: fd, id: idOf(&st)}, nil
}

// createTemp creates a new file beside base in the folder dir (open as dfd), readable by its
// owner only until it is checked.
func (t *destTree) createTemp(dir string, dfd int, base string) (*os.File, string, error) {
	// Read and write: its bytes are read again once its owner and mode are given (see
	// checkUnwritten).
	const flags = unix.O_RDWR | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for try := 0; ; try++ {
		tmp, err := t.journal.tempName(dir, base, "restore")
		if err != nil {
			return nil, "", err
		}
		fd, err := eintr.Openat(dfd, tmp, flags, 0o600)
		if err != nil {
			t.journal.settle(dir, tmp) // not made: what has the name is not this run's
		}
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("create temp file: %w", err)
		}
		return os.NewFile(uintptr(fd), tmp), tmp, nil
	}
}

// grantsPrivilege says whether the mode or attributes Run gives e grant privilege: a setuid
// or setgid bit, or a file capability.
func (p *Plan) grantsPrivilege(e *archive.Entry) bool {
	return p.perm(e)&(unix.S_ISUID|unix.S_ISGID) != 0 || p.givesCapability(e) && p.privileged(e)
}

// errTempWritten is the cause when a temp file held other bytes than those checked once its
// owner, attributes and mode were given.
var errTempWritten = errors.New("its temp file was written to in the destination while its owner and mode were given; what it holds is not restored")

// checkUnwritten reads the temp file f (named, beside e's name) again once finish gave it its
// owner, attributes and mode, and fails unless it holds still the bytes checked. Once
// chowned, its owner may open it by its name (or a user an ACL set before the mode lets
// write to it) and write: the kernel clears setuid, setgid and a capability on a write
// after they are given, not on one before, which would leave them on that user's bytes.
func (p *Plan) checkUnwritten(f *os.File, e *archive.Entry) error {
	if p.index == nil {
		return nil
	}
	want, ok := p.index.File(e.Name)
	if !ok || want.SHA256.IsZero() {
		return nil
	}
	sum, err := fileSHA256(io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		return &fileOpError{err}
	}
	if sum != want.SHA256.String() {
		return &fileOpError{errTempWritten}
	}
	return nil
}

// finish gives the checked file its owner, permission bits (setuid, setgid and sticky only
// as perm allows), attributes and mtime.
func (p *Plan) finish(fd int, made *unix.Stat_t, e *archive.Entry) error {
	warn, err := p.fdMeta(fd, e, made, true)
	if err != nil {
		return &fileOpError{err}
	}
	p.warn(e, warn...)
	if err := futimens(fd, p.mtime(e)); err != nil {
		return &fileOpError{err}
	}
	return nil
}

// setTimes sets the mtime of name in the folder dfd, never following a symlink.
func setTimes(dfd int, name string, mtime time.Time) error {
	ts := timespecs(mtime)
	if err := eintr.UtimesNanoAt(dfd, name, ts[:], unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("set mtime: %w", err)
	}
	return nil
}

// futimens sets the mtime of the file open as fd: the file checked, not whatever its name
// holds by now.
func futimens(fd int, mtime time.Time) error {
	ts := timespecs(mtime)
	if err := eintr.Futimens(fd, &ts); err != nil {
		return fmt.Errorf("set mtime: %w", err)
	}
	return nil
}

// timespecs are the times utimensat takes: the atime left alone, the mtime set.
func timespecs(mtime time.Time) [2]unix.Timespec {
	ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	if mtime.Year() < 1678 || mtime.Year() > 2261 { // beyond UnixNano's range
		ts[1] = unix.Timespec{Sec: mtime.Unix(), Nsec: int64(mtime.Nanosecond())}
	}
	return ts
}

// setDirTimes gives the archived folders this restore created, wrote into or found with
// other metadata their mode and mtime, each after every folder below it: writing into a
// folder changes its mtime, and a read-only parent would stop the change of a child. They
// are taken in post-order (belowFirst), so that the folder set next is mostly a sibling or
// the parent of the one before, open already: taking the deepest of the whole tree first
// opened each folder twice. The error is one that stops the restore (a read-only file
// system: every folder after would fail the same way).
func (p *Plan) setDirTimes(t *destTree, res *Result) error {
	var dirs []*archive.Entry
	for name, e := range p.dirs {
		if t.created[name] || p.fixDirs[name] || p.touched[name] {
			dirs = append(dirs, e)
		}
	}
	slices.SortFunc(dirs, func(a, b *archive.Entry) int { return belowFirst(a.Name, b.Name) })
	for _, e := range dirs {
		err := p.setDirMeta(t, e)
		switch {
		case isFatal(err):
			return fmt.Errorf("%s: %w", format.QuoteName(e.StoredName()), err)
		case err != nil:
			res.Failed = append(res.Failed, archive.Problem{Entry: e.StoredName(), Reason: err.Error()})
		}
	}
	return nil
}

// belowFirst orders the paths a and b of a tree in post-order: a path after every path
// below it, and otherwise as their first differing names sort (a slash sorting before any
// other byte, so that a folder's subtree stays together: "a/b/c" before "a/b" before
// "a/b.d").
func belowFirst(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i == len(a) && i == len(b):
		return 0
	case i == len(a) && b[i] == '/':
		return 1 // b lies below a
	case i == len(b) && a[i] == '/':
		return -1 // a lies below b
	case i == len(a):
		return -1
	case i == len(b):
		return 1
	case a[i] == '/':
		return -1
	case b[i] == '/':
		return 1
	}
	return cmp.Compare(a[i], b[i])
}

func (p *Plan) setDirMeta(t *destTree, e *archive.Entry) error {
	fd, err := t.dir(e.Name, false)
	if err != nil {
		return err
	}
	warn, err := p.fdMeta(fd, e, nil, t.created[e.Name])
	if err != nil {
		return err
	}
	p.warn(e, warn...)
	return futimens(fd, p.mtime(e))
}

// writeError is a failure to write a file's data into its temp file: the destination's
// doing, not the archive's. progressWriter wraps what the file's Write returns, and
// CopyChecked hands it back wrapped.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// progressWriter counts the bytes written, for a progress bar to poll, and stops a large
// file at once when ctx is done.
type progressWriter struct {
	ctx context.Context
	w   io.Writer
	n   *atomic.Int64
}

func (w *progressWriter) Write(b []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := w.w.Write(b)
	if w.n != nil {
		w.n.Add(int64(n))
	}
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

// danglingDest is MkdirAll's error for a DEST that is a symlink to nothing, said as such:
// its "mkdir DEST: file exists" named a file the user could not see. The target is not
// made: it may be anywhere.
func danglingDest(dest string, err error) error {
	target, lerr := os.Readlink(dest)
	if !errors.Is(err, fs.ErrExist) || lerr != nil {
		return err
	}
	return fmt.Errorf("%s is a symlink to %s, which does not exist", format.QuoteName(dest), format.QuoteName(target))
}
