package restore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
)

// A restore that may be undone leaves a before-state: an archive of what it replaces, whose
// manifest also lists what it creates (Created). Restoring that archive puts back the one
// and removes the other. The plan says what both are; the archive is written by the caller,
// with the writer create uses.

// noteCreated records that the restore creates e: the destination has nothing at its path.
func (p *Plan) noteCreated(e *archive.Entry) {
	p.creates = append(p.creates, e)
}

// Creates lists what Run creates, in archive order, for the before-state's manifest: the
// folders, the symlinks, and the files with their size and SHA-256 (the manifest's, else
// that of the entry's checked bytes), by which the undo tells them from another file.
func (p *Plan) Creates() []format.Created {
	var out []format.Created
	for _, e := range p.creates {
		switch {
		case e.IsDir:
			out = append(out, format.Created{Path: e.Name, Type: format.CreatedDir})
		case e.Kind != "" && p.index != nil:
			l, _ := p.index.Symlink(e.Name)
			out = append(out, format.Created{Path: e.Name, Type: format.CreatedSymlink, Target: l.Target})
		case e.Kind == "" && p.index != nil && p.recordedSum(e.Name):
			f, _ := p.index.File(e.Name)
			out = append(out, format.Created{Path: e.Name, Type: format.CreatedFile, Size: f.Size, SHA256: f.SHA256.String()})
		case e.Kind == "":
			// No SHA-256 recorded (an archive of another tool): the undo tells the file Run
			// writes from another by the hash of its checked bytes.
			if c, ok := p.hashEntry(e); ok {
				out = append(out, c)
			}
		}
	}
	return p.withFolders(out)
}

// ReplacedWith lists, for the before-state's manifest (Replaced), the files and symlinks Run
// writes over the files it replaces, and those it keeps as present and gives another owner,
// mode or mtime (their bytes or target, the archive's): what its undo may put the saved
// files back over. A file changed since (or one Run left as it was, because it changed
// during the run) holds neither.
func (p *Plan) ReplacedWith() []format.Created {
	var out []format.Created
	var entries map[string]*archive.Entry // by name, made when first needed
	for _, name := range slices.Concat(p.Conflicts, p.FixUps) {
		if _, ok := p.replaces[name]; !ok && !p.present[name] {
			continue // a created path the undo removes, not a file it writes, or a folder
		}
		if p.index != nil && p.recordedSum(name) {
			f, _ := p.index.File(name)
			out = append(out, format.Created{Path: name, Type: format.CreatedFile, Size: f.Size, SHA256: f.SHA256.String()})
			continue
		}
		// No SHA-256 recorded (an archive of another tool, without a manifest): the entry's
		// checked bytes are hashed here, or the undo could not tell the file Run writes from
		// the user's edit of it, and would put the saved file back over that edit.
		if entries == nil {
			entries = make(map[string]*archive.Entry, len(p.entries))
			for _, e := range p.entries {
				entries[e.Name] = e
			}
		}
		e, ok := entries[name]
		switch {
		case !ok:
		case e.Kind != "" && p.index != nil:
			// A symlink (over a file or another link, or one kept): the undo tells it from
			// what the user put there since by its target.
			if l, ok := p.index.Symlink(name); ok {
				out = append(out, format.Created{Path: name, Type: format.CreatedSymlink, Target: l.Target})
			}
		default:
			if c, ok := p.hashEntry(e); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// recordedSum says the manifest records the SHA-256 of the file name.
func (p *Plan) recordedSum(name string) bool {
	f, ok := p.index.File(name)
	return ok && !f.SHA256.IsZero()
}

// hashEntry is the record of the file entry e as Run writes it: its size and the SHA-256
// of its bytes, read and checked (CRC-32) from the archive. false when it cannot be read:
// Run fails on it too.
func (p *Plan) hashEntry(e *archive.Entry) (format.Created, bool) {
	if e.IsDir || e.Kind != "" {
		return format.Created{}, false
	}
	h := sha256.New()
	n, err := p.r.CopyChecked(h, e, make([]byte, 32<<10))
	if err != nil {
		return format.Created{}, false
	}
	return format.Created{Path: e.Name, Type: format.CreatedFile, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, true
}

// leftSince says why the file at e's path, which differs from e (the file a before-state
// saved), is not to be put back by this undo: it is not the file the restore undone wrote
// there (its manifest's Replaced record), so it was changed since, or the restore left it
// as it was. "" when it is that file, or the before-state records nothing of it.
func (p *Plan) leftSince(e *archive.Entry) string {
	rec, ok := p.replacedWith[e.Name]
	if !ok {
		return ""
	}
	var fh *os.File
	var err error
	if rec.Type == format.CreatedSymlink {
		var dfd int
		if dfd, err = p.tree.dir(parentOf(e.Name), false); err == nil {
			fh, err = sameLink(p.ctx, dfd, baseOf(e.Name), rec)
		}
	} else if fh, err = p.openDest(e.Name); err == nil {
		err = checkHeld(p.ctx, fh, rec)
	}
	if fh != nil {
		defer fh.Close()
	}
	switch {
	case err == nil:
		return ""
	case errors.As(err, new(changedSince)):
		return errLeftSince
	}
	return errLeftSince + ": " + opError(err).Error()
}

// errLeftSince is the warning about a file an undo leaves as it is.
const errLeftSince = "not put back: it is not the file the restore undone wrote there (changed since, or left as it was by that restore), and stays as it is"

// noteReplaced indexes a before-state's Replaced records by path.
func (p *Plan) noteReplaced(replaced []format.Created) {
	p.left = map[string]bool{}
	if len(replaced) == 0 {
		return
	}
	p.replacedWith = make(map[string]format.Created, len(replaced))
	for _, c := range replaced {
		p.replacedWith[c.Path] = c
	}
}

// dropLeft takes the entries leftSince spoke for out of the plan.
func (p *Plan) dropLeft(left map[string]bool) {
	if len(left) == 0 {
		return
	}
	p.entries = slices.DeleteFunc(p.entries, func(e *archive.Entry) bool {
		if left[e.Name] {
			p.Files--
			p.Bytes -= e.Size
		}
		return left[e.Name]
	})
}

// withFolders adds to created the folders above them that Run makes though the archive has
// no entry for them (DEST lacks them): the undo removes them too, when they are empty.
func (p *Plan) withFolders(created []format.Created) []format.Created {
	listed := make(map[string]bool, len(p.creates))
	for _, e := range p.creates {
		listed[e.Name] = true
	}
	for _, c := range created {
		for dir := parentOf(c.Path); dir != "" && !listed[dir] && p.missingInDest(dir); dir = parentOf(dir) {
			listed[dir] = true
			created = append(created, format.Created{Path: dir, Type: format.CreatedDir})
		}
	}
	return created
}

// Replaces lists the paths in the destination that Run replaces, removes, or whose owner,
// mode or mtime it sets: all that a before-state must hold. The folders that hold what it
// creates, replaces or removes are among them: writing into a folder moves its mtime, which
// Run then sets, and so must the undo, after its own removals.
func (p *Plan) Replaces() []string {
	out := slices.Concat(p.Conflicts, p.FixUps, p.Removes)
	listed := make(map[string]bool, len(out)+len(p.creates))
	for _, name := range out {
		listed[name] = true
	}
	changed := slices.Concat(p.Conflicts, p.Removes)
	for _, e := range p.creates {
		listed[e.Name] = true // made by Run: not there before
		changed = append(changed, e.Name)
	}
	for _, name := range changed {
		// A folder above what is created that DEST lacks (the archive has no entry for it)
		// is made by Run: there is nothing of it to save.
		if dir := parentOf(name); dir != "" && !listed[dir] && !p.missingInDest(dir) {
			listed[dir] = true
			out = append(out, dir)
		}
	}
	return out
}

// missingInDest says the plan found nothing at name in the destination, or above it (the
// plan looks no further down than a missing folder).
func (p *Plan) missingInDest(name string) bool {
	for n := name; ; n = parentOf(n) {
		if st, ok := p.existing[n]; ok && st.missing {
			return true
		}
		if n == "" {
			return false
		}
	}
}

// checkCreated lists the paths the archive's manifest records as created (it is the
// before-state of a restore) that the destination holds: Run removes them, if they still
// hold what that restore wrote.
func (p *Plan) checkCreated() {
	if p.r.Manifest == nil {
		return
	}
	for _, c := range p.r.Manifest.Created {
		if err := archive.CheckName(c.Path, archive.HostUnix); err != nil {
			p.Refused = append(p.Refused, archive.Problem{Entry: c.Path, Reason: "created path: " + err.Error()})
			continue
		}
		if !p.included(&archive.Entry{Name: c.Path, IsDir: c.Type == format.CreatedDir}) {
			continue
		}
		// A path below a symlink or a file is not what that restore created, and is neither
		// read (into this restore's before-state) nor removed.
		if missing, reason := p.onTheWay(c.Path); reason != "" {
			p.warnings = append(p.warnings, archive.Problem{Entry: c.Path, Reason: errNotRemoved + reason})
			continue
		} else if missing {
			continue
		}
		// One that cannot be checked (its lstat fails) is not taken for gone: it is refused as
		// an entry is, except with --force, which removes it as one that is there, where its
		// before-state and the removal meet the error and say it.
		st := p.lstat(c.Path)
		switch {
		case st.missing:
		case st.err != nil && !p.opts.Force:
			p.Refused = append(p.Refused, archive.Problem{Entry: c.Path, Reason: fmt.Sprintf("created path: cannot check it in the destination: %v", st.err)})
		case !p.opts.Force:
			p.Conflicts = append(p.Conflicts, c.Path) // removing one is a change, as replacing is
		default:
			p.Removes = append(p.Removes, c.Path)
			p.remove = append(p.remove, c)
		}
	}
}

// changedSince is why a created path stays that is the user's doing (it was changed, or
// holds the user's files, since the restore made it): a warning. Any other reason the undo
// could not remove a path (EIO, EPERM) fails it.
type changedSince string

func (c changedSince) Error() string { return string(c) }

// errNotRemoved begins the warning about a created path that stays.
const errNotRemoved = "created by the restore undone, not removed: "

// removeCreated removes, deepest first, the created paths that still hold what the restore
// that created them wrote: files of the recorded size and SHA-256, empty folders, symlinks
// to the recorded target. Anything else stays, with a warning.
// It stops when ctx is done: each file is read to its end to be told from another.
func (p *Plan) removeCreated(ctx context.Context, t *destTree, res *Result) error {
	slices.SortStableFunc(p.remove, func(a, b format.Created) int {
		return cmp.Compare(strings.Count(b.Path, "/"), strings.Count(a.Path, "/"))
	})
	dirs := &goingDirs{going: map[string]bool{}, opened: map[string]uint32{}}
	for _, c := range p.remove {
		if c.Type == format.CreatedDir {
			dirs.going[c.Path] = true
		}
	}
	// A folder opened and not removed (an interrupt, an error, a file of the user's in it)
	// gets its mode back.
	defer dirs.closeAll(t)
	for _, c := range p.remove {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := p.removeOne(ctx, t, c, dirs)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, unix.ENOENT):
		case errors.As(err, new(changedSince)):
			res.Warnings = append(res.Warnings, archive.Problem{Entry: c.Path, Reason: errNotRemoved + err.Error()})
		case err != nil:
			// Not the user's doing: the undo did not do what it was asked to.
			res.Failed = append(res.Failed, archive.Problem{Entry: c.Path, Reason: errNotRemoved + err.Error()})
		default:
			res.Removed++
			p.touched[parentOf(c.Path)] = true
		}
	}
	return nil
}

// goingDirs are the folders the restore undone created, which the undo removes, and the
// modes of those it opened (chmod u+rwx) to empty them.
type goingDirs struct {
	going  map[string]bool
	opened map[string]uint32
}

// open gives the folder dir, open as dfd, its owner's permissions, once: a read-only folder
// the restore made (its archived mode) is emptied by the undo that removes it.
func (g *goingDirs) open(dir string, dfd int) bool {
	if _, done := g.opened[dir]; done || !g.going[dir] {
		return false
	}
	var st unix.Stat_t
	if eintr.Fstat(dfd, &st) != nil || eintr.Fchmod(dfd, st.Mode&0o7777|0o700) != nil {
		return false
	}
	g.opened[dir] = st.Mode & 0o7777
	return true
}

// removed notes that the folder dir is gone.
func (g *goingDirs) removed(dir string) { delete(g.opened, dir) }

// closeAll gives the folders open opened that are still there their modes back.
func (g *goingDirs) closeAll(t *destTree) {
	for _, dir := range slices.Sorted(maps.Keys(g.opened)) {
		if fd, err := t.dir(dir, false); err == nil {
			eintr.Fchmod(fd, g.opened[dir])
		}
	}
}

// removeOne removes c, which the restore undone created.
func (p *Plan) removeOne(ctx context.Context, t *destTree, c format.Created, dirs *goingDirs) error {
	dfd, err := t.dir(parentOf(c.Path), false)
	if err != nil {
		return err
	}
	base := c.Path[strings.LastIndexByte(c.Path, '/')+1:]
	unlink := func(flags int) error {
		err := eintr.Unlinkat(dfd, base, flags)
		if errors.Is(err, unix.EACCES) && dirs.open(parentOf(c.Path), dfd) {
			err = eintr.Unlinkat(dfd, base, flags)
		}
		return err
	}
	if c.Type == format.CreatedDir {
		err := unlink(unix.AT_REMOVEDIR)
		if err == nil {
			dirs.removed(c.Path)
		}
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return changedSince("the folder is not empty")
		}
		return err
	}
	// A file or a symlink is held open and checked, then removed only while its name holds
	// what was checked: a file saved at the name since (an editor's rename, or sed -i on
	// the link) is the user's, and stays.
	check := sameFile
	if c.Type == format.CreatedSymlink {
		check = sameLink
	}
	f, err := check(ctx, dfd, base, c)
	if err != nil {
		return err
	}
	defer f.Close()
	return t.removeHeld(parentOf(c.Path), dfd, base, f, func(move func() error) error {
		err := move()
		if errors.Is(err, unix.EACCES) && dirs.open(parentOf(c.Path), dfd) {
			err = move()
		}
		return err
	})
}

// sameLink opens base in the folder dfd (O_PATH, never following it) and checks that it is
// a symlink to c's target, read through that descriptor: the link held, not whatever the
// name holds by then.
func sameLink(_ context.Context, dfd int, base string, c format.Created) (*os.File, error) {
	fd, err := eintr.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), base)
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		f.Close()
		return nil, changedSince("no longer the symlink the restore made")
	}
	target, err := readlinkat(fd, "")
	if err == nil && target != c.Target {
		err = changedSince("the symlink points elsewhere now")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sameFile opens base in the folder dfd and checks that it is a regular file of c's size
// and SHA-256, unchanged while it was read.
func sameFile(ctx context.Context, dfd int, base string, c format.Created) (*os.File, error) {
	fd, err := eintr.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), base)
	if err := checkHeld(ctx, f, c); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkHeld(ctx context.Context, f *os.File, c format.Created) error {
	var before, after unix.Stat_t
	if err := eintr.Fstat(int(f.Fd()), &before); err != nil {
		return err
	}
	if before.Mode&unix.S_IFMT != unix.S_IFREG || before.Size != c.Size {
		return changedSince("changed since the restore wrote it")
	}
	sum, err := fileSHA256(&ctxReader{ctx: ctx, r: f})
	if err != nil {
		return err
	}
	if err := eintr.Fstat(int(f.Fd()), &after); err != nil {
		return err
	}
	if sum != c.SHA256 || after.Ctim != before.Ctim || after.Size != before.Size {
		return changedSince("changed since the restore wrote it")
	}
	return nil
}

// removeHeld removes base from the folder dir (open as dfd) only while it is still the file
// held open as f, which was checked: the name is first moved aside to a temp name, and what
// the move took is compared with f. Anything else (a file someone saved at the name after the
// check, by a rename) is moved back, and stays. move makes a move, and may try it again.
//
// The aside name is of its own kind (".undo-"), which no sweep of a killed run's journal
// removes, and so is not recorded in one: what it holds may be the user's file, so nothing
// ever removes it but this function, after the comparison. An undo killed between the move
// and the removal leaves the name, which the docs tell of. Not writing the journal also lets
// a removal, which frees room, be made on a full disk.
func (t *destTree) removeHeld(dir string, dfd int, base string, f *os.File, move func(func() error) error) error {
	held, err := fdID(int(f.Fd()))
	if err != nil {
		return err
	}
	tmp := asideName(base)
	err = move(func() error { return eintr.Renameat2(dfd, base, dfd, tmp, unix.RENAME_NOREPLACE, held.file) })
	if err != nil {
		return err
	}
	// Whatever comes next (the removal, or a move back), the file held has moved: its
	// ctime is this undo's doing.
	defer t.tookName(held, int(f.Fd()))
	took, statErr := statID(dfd, tmp)
	if statErr != nil || took.file != held.file {
		if err := eintr.Renameat2(dfd, tmp, dfd, base, unix.RENAME_NOREPLACE, took.file); err != nil {
			return &strandedError{tmp: tmp, err: err}
		}
		if statErr != nil { // what the move took is not known, and not by the user's doing
			return statErr
		}
		return changedSince("replaced since the undo checked it")
	}
	if err := eintr.Unlinkat(dfd, tmp, 0); err != nil {
		// Back at its name, where the user sees what stays; else at the aside name, said.
		if merr := eintr.Renameat2(dfd, tmp, dfd, base, unix.RENAME_NOREPLACE, held.file); merr != nil {
			return fmt.Errorf("%w; it is now at %s", err, format.QuoteName(tmp))
		}
		return err
	}
	return nil
}

// tookName records the ctime the removal (or the move aside and back) of a name gives the
// file held open as fd, which was held before: one of another name in DEST (a hard link the restore undone made to a
// file it replaced) moves, and the check of that name before it is put back would take the
// change for someone's (see replacedSince). Removing what was created first leaves room
// for what is put back; this keeps that order from failing a hard-link group.
func (t *destTree) tookName(held nodeID, fd int) {
	after, err := fdID(fd)
	if err != nil || after.file != held.file || after == held {
		return
	}
	t.replaceMu.Lock()
	t.replaced[held] = after
	t.replaceMu.Unlock()
}

// asideName is the name the undo moves base aside to in its folder: ".BASE.undo-TOKEN", the
// start of base kept to 200 bytes (a name is at most 255).
func asideName(base string) string {
	prefix := "." + base
	if len(prefix) > 200 {
		prefix = prefix[:200]
	}
	return prefix + ".undo-" + atomicfile.NewToken()
}

func readlinkat(dfd int, base string) (string, error) {
	buf := make([]byte, 4096)
	n, err := eintr.Readlinkat(dfd, base, buf)
	if err != nil {
		return "", fmt.Errorf("readlink: %w", err)
	}
	return string(buf[:n]), nil
}
