package restore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
)

// maxTarget is the longest symlink target restore reads from an entry: Linux holds at most
// PATH_MAX (4096) bytes, so more is not a target backup stored.
const maxTarget = 1 << 16

// restoreSymlink creates the symlink e stored, as it is (absolute, dangling or pointing out
// of the destination: a target is data, never followed), under a temp name beside its path,
// gives it its owner, attributes and mtime, and renames it into place. Its data must be the
// target the manifest records.
func (p *Plan) restoreSymlink(ctx context.Context, t *destTree, e *archive.Entry, res *Result) error {
	target, err := p.readTarget(e)
	if err != nil {
		res.Damaged = append(res.Damaged, archive.Problem{Entry: e.Name, Reason: err.Error()})
		return nil
	}
	err = p.createSymlink(t, e, target)
	switch {
	case err == nil:
		// In place, so counted, even when ctx is done by now: the count says what DEST holds.
		res.Symlinks++
		p.mark(parentOf(e.Name))
		return ctx.Err()
	case ctx.Err() != nil:
		return ctx.Err()
	case isFatal(err):
		return fmt.Errorf("%s: %w", format.QuoteName(e.Name), err)
	default:
		res.Failed = append(res.Failed, archive.Problem{Entry: e.Name, Reason: err.Error()})
	}
	return nil
}

func (p *Plan) readTarget(e *archive.Entry) (string, error) {
	if e.Size > maxTarget {
		return "", fmt.Errorf("symlink target of %d bytes", e.Size)
	}
	var b bytes.Buffer
	if _, err := p.r.CopyChecked(&b, e, make([]byte, 4096)); err != nil {
		if errors.Is(err, archive.ErrSHA256) {
			return "", errors.New("symlink target does not match the manifest")
		}
		return "", err
	}
	target := b.String()
	if err := archive.CheckTarget(target); err != nil {
		return "", err
	}
	return target, nil
}

func (p *Plan) createSymlink(t *destTree, e *archive.Entry, target string) error {
	dfd, err := t.dir(parentOf(e.Name), true)
	if err != nil {
		return err
	}
	base := e.Name[strings.LastIndexByte(e.Name, '/')+1:]
	tmp, err := t.tempSymlink(parentOf(e.Name), dfd, base, target)
	if err != nil {
		return err
	}
	made, err := holdSymlink(dfd, tmp)
	if err == nil {
		defer unix.Close(made.fd)
		err = p.symlinkMeta(dfd, tmp, made, e)
	}
	if err == nil {
		err = t.checkedRename(parentOf(e.Name), dfd, tmp, base, made.id, p.replacing(e.Name))
	}
	if err != nil {
		t.dropTemp(parentOf(e.Name), dfd, tmp, err)
	}
	return err
}

// holdSymlink opens the symlink this run just made at tmp in the folder dfd (O_PATH: the
// link itself) and checks that it is a symlink of this user's: whoever may write in the
// folder may have put a file of theirs at the name since the symlinkat. Held open, its inode
// number cannot pass to another file put at the name later.
func holdSymlink(dfd int, tmp string) (heldFile, error) {
	fd, err := eintr.Openat(dfd, tmp, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		return heldFile{}, &fileOpError{&uncheckedTempError{fmt.Errorf("open: %w", err)}}
	case err != nil:
		return heldFile{}, &fileOpError{errTempReplaced}
	}
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return heldFile{}, &fileOpError{&uncheckedTempError{fmt.Errorf("stat: %w", err)}}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK || int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return heldFile{}, &fileOpError{errTempReplaced}
	}
	return heldFile{fd: fd, id: idOf(&st)}, nil
}

// symlinkMeta gives the temp symlink made its owner, through its descriptor, then its
// attributes and mtime by name (no call sets those through a symlink's descriptor), the name
// checked to hold it still before each.
func (p *Plan) symlinkMeta(dfd int, tmp string, made heldFile, e *archive.Entry) error {
	warn, err := p.linkMeta(dfd, tmp, made, e)
	if err != nil {
		return err
	}
	p.warn(e, warn...)
	if err := checkTemp(dfd, tmp, made.id); err != nil {
		return err
	}
	return setTimes(dfd, tmp, p.mtime(e))
}

// tempSymlink creates the symlink under a new name beside base in the folder dir (open as
// dfd).
func (t *destTree) tempSymlink(dir string, dfd int, base, target string) (string, error) {
	for try := 0; ; try++ {
		tmp, err := t.journal.tempName(dir, base, "restore")
		if err != nil {
			return "", err
		}
		err = eintr.Symlinkat(target, dfd, tmp)
		if err != nil {
			t.journal.settle(dir, tmp) // not made: what has the name is not this run's
		}
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("symlink: %w", err)
		}
		return tmp, nil
	}
}

// warn records that e was restored less faithfully than recorded, a warning for each err.
func (p *Plan) warn(e *archive.Entry, errs ...error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, err := range errs {
		p.warnings = append(p.warnings, archive.Problem{Entry: e.StoredName(), Reason: err.Error()})
	}
}

// restored notes a file of a hard-link group that was written, for relink.
func (p *Plan) restored(e *archive.Entry) {
	if group := p.linkGroup(e); group != 0 {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.linked[group] = append(p.linked[group], e.Name)
	}
}

// linkGroup is the hard-link group the manifest puts e in, 0 for none.
func (p *Plan) linkGroup(e *archive.Entry) int {
	if p.index == nil {
		return 0
	}
	f, _ := p.index.File(e.Name)
	return f.Link
}

// relink turns each hard-link group back into one file, as tar does: every member is
// replaced by a link to the group's anchor (linkat to a temp name, then an exchange checked
// as --force's). Where that fails (another file system, a file system without hard links)
// the member stays a separate copy, with a warning. A member kept as already present that
// has names outside the group (a hard link to a file elsewhere, maybe outside DEST) is left
// as it is, and nothing is linked to it: a restored name must not join a file outside. A
// member kept as already present is never replaced by a link (errKeptPresent). Only
// members recorded with the same size and SHA-256 become one file; a member recorded with
// other content stays a separate file, with a warning.
func (p *Plan) relink(t *destTree, res *Result) {
	entries := map[string]*archive.Entry{}
	if len(p.linked) > 0 {
		for _, e := range p.entries {
			entries[e.Name] = e
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.linked)) {
		parts := p.byContent(p.linked[n], entries)
		// The group is the part most members agree on; the others are the odd ones out.
		main := 0
		for i, names := range parts {
			if len(names.names) > len(parts[main].names) {
				main = i
			}
		}
		for i, names := range parts {
			if i != main {
				why := errOtherMeta
				if parts[i].content != parts[main].content {
					why = errOtherContent
				}
				for _, name := range names.names {
					p.linkWarning(name, parts[main].names[0], why)
				}
			}
			p.relinkGroup(t, names.names)
		}
	}
}

// errKeptPresent is why a member of a hard-link group that was already there, a file of
// its own with the recorded bytes, mode and mtime, is not linked to the group's file: a
// restore replaces nothing already there by a link, with or without --force (the user's
// file may carry what the archive does not record, attributes or other names, and the
// before-state of a --force does not hold a file kept as present).
var errKeptPresent = errors.New("it was there already as a file of its own, and is left as it is")

// errOtherContent is why a member of a hard-link group is not linked to the group's file:
// the manifest records another size or SHA-256 for it (a file changed while its names were
// read, or a manifest made to lie). Linking it would put other bytes at its name, in place
// of those checked against its record.
var errOtherContent = errors.New("the manifest records other content for it")

// errOtherMeta is why a member of a hard-link group recorded with the group's content is
// not linked to the group's file: the manifest records another owner, mode, mtime or
// attributes for it (a chmod while its names were read, or a manifest made to lie). One
// file has one of each: linking it would give it the group's (a 0600 file the 0644 of
// another name, readable by all), not those recorded for it.
var errOtherMeta = errors.New("the manifest records another owner, mode, mtime or attributes for it")

// linkPart is the members of a link group recorded alike: the same content, and the same
// owner, mode, mtime and attributes as this restore gives them.
type linkPart struct {
	content linkContent
	meta    string
	names   []string
}

type linkContent struct {
	size int64
	sum  format.Digest
}

// byContent splits the members of a link group by the size and SHA-256 their records give,
// and by the metadata this restore gives each (groupMeta), in the order met: only names
// recorded alike may become one file.
func (p *Plan) byContent(names []string, entries map[string]*archive.Entry) []linkPart {
	var parts []linkPart
	for _, name := range names {
		f, _ := p.index.File(name)
		k := linkPart{content: linkContent{f.Size, f.SHA256}, meta: p.groupMeta(entries[name])}
		i := slices.IndexFunc(parts, func(part linkPart) bool { return part.content == k.content && part.meta == k.meta })
		if i < 0 {
			parts = append(parts, k)
			i = len(parts) - 1
		}
		parts[i].names = append(parts[i].names, name)
	}
	return parts
}

// groupMeta is what this restore gives e beside its data (owner, mode, mtime and, with
// Xattrs, attributes), as a key to compare the members of a link group by.
func (p *Plan) groupMeta(e *archive.Entry) string {
	if e == nil {
		return ""
	}
	uid, gid, ok := p.owner(e)
	key := fmt.Sprintf("%d:%d:%t %o %d", uid, gid, ok, p.perm(e), p.mtime(e).UnixNano())
	if m := e.RecordedMeta(p.index); p.opts.Xattrs && m != nil {
		for _, name := range slices.Sorted(maps.Keys(m.Xattrs)) {
			key += fmt.Sprintf(" %q=%q", name, m.Xattrs[name])
		}
	}
	return key
}

// relinkGroup links the members of one group of the same recorded content, as relink says.
func (p *Plan) relinkGroup(t *destTree, names []string) {
	inGroup, errs := p.inGroup(t, names)
	anchor, outsider := p.anchorOf(names, inGroup, errs), ""
	var unknown []int // members whose names could not be counted
	for i, name := range names {
		switch {
		case errs[i] != nil:
			unknown = append(unknown, i)
		case !inGroup[i]:
			outsider = cmp.Or(outsider, name)
		case name == anchor:
		default:
			if err := p.link(t, anchor, name); err != nil {
				p.linkWarning(name, anchor, err)
			}
		}
	}
	if outsider != "" && anchor != "" {
		p.linkWarning(anchor, outsider, fmt.Errorf("%s has names outside the group", format.QuoteName(outsider)))
	}
	for _, i := range unknown {
		if of := cmp.Or(anchor, outsider); of != "" {
			p.linkWarning(names[i], of, errs[i])
		}
	}
}

// anchorOf picks the member the others are linked to: one kept as already present, when
// there is one, since a kept member is never replaced by a link but may be linked to (all
// its names are the group's); else the first. A group one of whose later members was
// restored before (an --include, a restore cut short) so becomes one file again, as one
// whose first member was.
func (p *Plan) anchorOf(names []string, inGroup []bool, errs []error) string {
	anchor := ""
	for i, name := range names {
		if errs[i] != nil || !inGroup[i] {
			continue
		}
		if p.kept[name] {
			return name
		}
		anchor = cmp.Or(anchor, name)
	}
	return anchor
}

func (p *Plan) linkWarning(name, of string, err error) {
	p.warnings = append(p.warnings, archive.Problem{Entry: name,
		Reason: fmt.Sprintf("restored as a separate file, not a hard link of %s: %v", format.QuoteName(of), err)})
}

// inGroup reports, for each member of a link group, whether all the names of its file are
// members (a file this run wrote has one name), and the error of a member whose folder or
// lstat failed for another reason than a missing name (an I/O error): nothing is known of
// its names, and the error says why it is not linked.
func (p *Plan) inGroup(t *destTree, names []string) ([]bool, []error) {
	type seen struct {
		id    fileID
		nlink uint64
	}
	stats, errs := make([]seen, len(names)), make([]error, len(names))
	for i, name := range names {
		dfd, err := t.dir(parentOf(name), false)
		var st unix.Stat_t
		if err == nil {
			if err = eintr.Fstatat(dfd, baseOf(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				err = fmt.Errorf("lstat: %w", err)
			}
		}
		switch {
		case err == nil:
			stats[i] = seen{idOf(&st), st.Nlink}
		case !errors.Is(err, unix.ENOENT):
			errs[i] = err
		}
	}
	ok := make([]bool, len(names))
	for i, s := range stats {
		members := 0
		for _, o := range stats {
			if o.id == s.id {
				members++
			}
		}
		ok[i] = s.nlink != 0 && s.nlink <= uint64(members)
	}
	return ok, errs
}

// link replaces name, the file this run put or kept there, by a link to anchor. A member that
// is anchor's file already (a re-run) is left as it is.
func (p *Plan) link(t *destTree, anchor, name string) error {
	fd, err := t.dir(parentOf(anchor), false)
	if err != nil {
		return err
	}
	src, err := unix.Dup(fd) // t.dir's descriptor is valid until its next call only
	if err != nil {
		return err
	}
	defer unix.Close(src)
	want, err := statID(src, baseOf(anchor))
	if err != nil {
		return err
	}
	// Only to the file this run put or kept at anchor's name: whoever may write in its
	// folder may have put a file of theirs there since, which must not gain this name. The
	// change time tells it from a new file given the freed inode number (ext4 hands it out
	// again at once); each link this function makes moves it, and is recorded below.
	if placed, ok := p.placed[anchor]; !ok || placed != want {
		return fmt.Errorf("%s %w", format.QuoteName(anchor), errReplaced)
	}
	if err := p.checkHandle(anchor, src, baseOf(anchor)); err != nil {
		return err
	}
	old, ok := p.placed[name]
	switch {
	case !ok:
		return errors.New("not as this restore left it")
	case old.file == want.file:
		return nil
	case p.kept[name]:
		return errKeptPresent
	}
	dfd, err := t.dir(parentOf(name), false)
	if err != nil {
		return err
	}
	base := baseOf(name)
	tmp, err := t.journal.tempName(parentOf(name), base, "link")
	if err != nil {
		return err
	}
	if err := p.linkat(src, baseOf(anchor), dfd, tmp, 0, want.file); err != nil {
		t.journal.settle(parentOf(name), tmp)
		return fmt.Errorf("link: %w", err)
	}
	// The link is to what anchor's name held by then: it must be the file checked above.
	got, err := statID(dfd, tmp)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		err = &uncheckedTempError{fmt.Errorf("lstat: %w", err)} // stays in the journal
	case err != nil || got.file != want.file:
		err = fmt.Errorf("%s %w", format.QuoteName(anchor), errReplaced)
	default:
		if err = p.checkHandle(anchor, dfd, tmp); err == nil {
			err = t.checkedRename(parentOf(name), dfd, tmp, base, want.file, &old)
		}
	}
	if err != nil {
		t.dropTemp(parentOf(name), dfd, tmp, err)
		return err
	}
	// The anchor's file as the link left it, seen through the name this run just gave it.
	if now, serr := statID(dfd, base); serr == nil && now.file == want.file {
		p.placed[anchor], p.placed[name] = now, now
		if h, ok := p.handles[anchor]; ok {
			p.handles[name] = h
		}
	}
	return nil
}

// checkHandle checks that name, in the folder dfd, is the file whose handle was recorded
// for placed, where one was: errReplaced when it is another file, and the error as it is
// when the handle cannot be read (an I/O error), which says nothing of a swap.
func (p *Plan) checkHandle(placed string, dfd int, name string) error {
	want, ok := p.handles[placed]
	if !ok {
		return nil
	}
	got, err := handleOf(dfd, name)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: name_to_handle_at: %w", format.QuoteName(placed), err)
	case err != nil || got != want:
		return fmt.Errorf("%s %w", format.QuoteName(placed), errReplaced)
	}
	return nil
}

// handleOf is the file handle of name in the folder dfd (never following a symlink), or of
// the file open as dfd when name is "": its type and bytes, which name the file's inode and
// its generation.
func handleOf(dfd int, name string) (string, error) {
	flags := 0
	if name == "" {
		flags = unix.AT_EMPTY_PATH
	}
	h, _, err := eintr.NameToHandleAt(dfd, name, flags)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(int(h.Type())) + ":" + string(h.Bytes()), nil
}
