package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maxTarget is the longest symlink target restore reads from an entry: Linux holds at most
// PATH_MAX (4096) bytes, so more is not a target backup stored.
const maxTarget = 1 << 16

// restoreSymlink creates the symlink e stored, as it is (absolute, dangling or pointing out
// of the destination: a target is data, never followed), under a temp name beside its path,
// gives it its owner, attributes and mtime, and renames it into place. Its data must be the
// target the manifest records.
func (p *RestorePlan) restoreSymlink(ctx context.Context, t *destTree, e *Entry, res *RestoreResult) error {
	target, err := p.readTarget(e)
	if err != nil {
		res.Damaged = append(res.Damaged, Problem{Entry: e.Name, Reason: err.Error()})
		return nil
	}
	err = p.createSymlink(t, e, target)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil:
		res.Symlinks++
		p.touched[parentOf(e.Name)] = true
	case isFatal(err):
		return fmt.Errorf("%s: %w", QuoteName(e.Name), err)
	default:
		res.Failed = append(res.Failed, Problem{Entry: e.Name, Reason: err.Error()})
	}
	return nil
}

func (p *RestorePlan) readTarget(e *Entry) (string, error) {
	if e.Size > maxTarget {
		return "", fmt.Errorf("symlink target of %d bytes", e.Size)
	}
	var b bytes.Buffer
	want := targetSum(p.index.target(e.Name))
	if _, err := copyChecked(&b, e, want, make([]byte, 4096)); err != nil {
		if errors.Is(err, errSHA256) {
			return "", errors.New("symlink target does not match the manifest")
		}
		return "", err
	}
	if bytes.IndexByte(b.Bytes(), 0) >= 0 || b.Len() == 0 {
		return "", errors.New("symlink target is empty or holds a NUL")
	}
	return b.String(), nil
}

func (p *RestorePlan) createSymlink(t *destTree, e *Entry, target string) error {
	dfd, err := t.dir(parentOf(e.Name), true)
	if err != nil {
		return err
	}
	base := e.Name[strings.LastIndexByte(e.Name, '/')+1:]
	tmp, err := t.tempSymlink(parentOf(e.Name), dfd, base, target)
	if err != nil {
		return err
	}
	warn, err := p.linkMeta(dfd, tmp, e)
	if err == nil {
		p.warn(e, warn...)
		err = setTimes(dfd, tmp, p.mtime(e))
	}
	if err == nil {
		err = t.checkedRename(parentOf(e.Name), dfd, tmp, base, p.replacing(e.Name))
	}
	if err != nil {
		dropTemp(dfd, tmp, err)
	}
	return err
}

// tempSymlink creates the symlink under a new name beside base in the folder dir (open as
// dfd).
func (t *destTree) tempSymlink(dir string, dfd int, base, target string) (string, error) {
	for try := 0; ; try++ {
		tmp, err := t.journal.tempName(dir, base, "restore")
		if err != nil {
			return "", err
		}
		err = unix.Symlinkat(target, dfd, tmp)
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
func (p *RestorePlan) warn(e *Entry, errs ...error) {
	for _, err := range errs {
		p.warnings = append(p.warnings, Problem{Entry: e.StoredName(), Reason: err.Error()})
	}
}

// restored notes a file of a hard-link group that was written, for relink.
func (p *RestorePlan) restored(e *Entry) {
	if p.index == nil {
		return
	}
	if n := p.index.link(e.Name); n != 0 {
		p.linked[n] = append(p.linked[n], e.Name)
	}
}

// relink turns each hard-link group back into one file, as tar does: every member restored
// after the first is replaced by a link to it (linkat to a temp name, then rename). Where
// that fails (another file system, a file system without hard links) the member stays a
// separate copy, with a warning.
func (p *RestorePlan) relink(t *destTree, res *RestoreResult) {
	for _, n := range slices.Sorted(maps.Keys(p.linked)) {
		names := p.linked[n]
		for _, name := range names[1:] {
			if err := p.link(t, names[0], name); err != nil {
				p.warnings = append(p.warnings, Problem{Entry: name,
					Reason: fmt.Sprintf("restored as a separate file, not a hard link of %s: %v", QuoteName(names[0]), err)})
			}
		}
	}
	res.Warnings = append(res.Warnings, p.warnings...)
}

func (p *RestorePlan) link(t *destTree, first, name string) error {
	fd, err := t.dir(parentOf(first), false)
	if err != nil {
		return err
	}
	src, err := unix.Dup(fd) // t.dir's descriptor is valid until its next call only
	if err != nil {
		return err
	}
	defer unix.Close(src)
	dfd, err := t.dir(parentOf(name), false)
	if err != nil {
		return err
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	tmp, err := t.journal.tempName(parentOf(name), base, "link")
	if err != nil {
		return err
	}
	if err := p.linkat(src, first[strings.LastIndexByte(first, '/')+1:], dfd, tmp, 0); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	err = t.check(parentOf(name))
	if err == nil {
		if err = unix.Renameat(dfd, tmp, dfd, base); err != nil {
			err = fmt.Errorf("rename: %w", err)
		}
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
	}
	return err
}
