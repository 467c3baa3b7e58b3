package restore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
)

// A re-run of a restore (after Ctrl-C, a crash, a full disk) must not rewrite what the
// first run put in place: a file the destination holds already with the recorded content
// is kept, and only its owner, mode and mtime are set where they differ.

// isPresent reports whether the destination holds e's recorded content at e's path: a
// regular file of the size the manifest records (cheap, asked first), then of its SHA-256.
// Without a manifest nothing is present: a CRC-32 is too weak to keep a file by. The error
// says why the file there could not be read: then nothing is known of its content, and a
// conflict would say it differs.
func (p *Plan) isPresent(e *archive.Entry, st destState) (bool, error) {
	if p.storedSymlink(e) {
		return p.isSymlinkPresent(e, st), nil
	}
	if e.Kind != "" || !st.mode.IsRegular() || p.index == nil {
		return false, nil
	}
	f, ok := p.index.File(e.Name)
	if !ok || f.Size != e.Size || f.SHA256.IsZero() {
		return false, nil
	}
	fh, err := p.openDest(e.Name)
	if err != nil {
		// Gone since its lstat, a symlink now, or a folder above it swapped: what is there
		// is not the file, and the write that follows says so. Only a failure of the
		// file itself (EIO, EACCES) leaves its content unknown.
		var errno unix.Errno
		if !errors.As(err, &errno) || errno == unix.ENOENT || errno == unix.ELOOP || errno == unix.ENOTDIR {
			return false, nil
		}
		return false, fmt.Errorf("open: %w", err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return false, opError(err)
	}
	if !info.Mode().IsRegular() || info.Size() != f.Size {
		return false, nil
	}
	sum, err := fileSHA256(&ctxReader{ctx: p.ctx, r: fh})
	if err != nil && p.ctx.Err() == nil {
		return false, opError(err)
	}
	// A hash cut short by Ctrl-C says "not present"; NewPlan then drops the plan.
	if err != nil || sum != f.SHA256.String() {
		return false, nil
	}
	fix := !p.sameMeta(e, info) || !p.sameXattrs(e, int(fh.Fd()))
	sys, _ := info.Sys().(*syscall.Stat_t) // an *os.File's, on Linux
	if risk := p.inPlaceRisk(e, sys.Uid, sys.Gid, sys.Mode, uint64(sys.Nlink)); fix && risk != nil {
		if p.opts.Force {
			return false, nil // a conflict: replaced by a file of its own
		}
		p.warnings = append(p.warnings, archive.Problem{Entry: e.Name, Reason: risk.Error() + " (--force replaces it)"})
		fix = false
	}
	p.present[e.Name] = fix
	p.Present++
	p.PresentBytes += f.Size
	if p.present[e.Name] {
		p.FixUps = append(p.FixUps, e.Name)
	}
	return true, nil
}

// opError is err without the path, which the problem's entry names already.
func opError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// isSymlinkPresent reports whether the destination holds the stored symlink e already: a
// symlink with the recorded target (and owner, where the restore sets owners), as an earlier
// run of this restore made it. It is kept, as a file with its content is, so that a re-run
// writes only what is missing.
func (p *Plan) isSymlinkPresent(e *archive.Entry, st destState) bool {
	if st.mode&fs.ModeSymlink == 0 {
		return false
	}
	dfd, err := p.tree.dir(parentOf(e.Name), false)
	if err != nil {
		return false
	}
	target, err := readlinkat(dfd, baseOf(e.Name))
	l, _ := p.index.Symlink(e.Name)
	if err != nil || target != l.Target {
		return false
	}
	var s unix.Stat_t
	if eintr.Fstatat(dfd, baseOf(e.Name), &s, unix.AT_SYMLINK_NOFOLLOW) != nil || nodeOf(&s) != st.id {
		return false
	}
	if uid, gid, ok := p.owner(e); ok && (int(s.Uid) != uid || int(s.Gid) != gid) {
		return false
	}
	p.present[e.Name] = false
	p.Present++
	return true
}

// ctxReader stops a long read once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func fileSHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameMeta reports whether the file described by info has the owner, mode and mtime the
// restore would give e.
func (p *Plan) sameMeta(e *archive.Entry, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Mode&0o7777 != p.perm(e) || !p.sameMtime(e, info.ModTime()) {
		return false
	}
	if uid, gid, ok := p.owner(e); ok && (int(st.Uid) != uid || int(st.Gid) != gid) {
		return false
	}
	return true
}

// keepPresent keeps a file the destination holds already, and gives it its owner, mode,
// attributes and mtime when they differ. It counts the file as present once it is as the
// archive records it; one whose fix failed is counted once, as failed. The error is one
// that stops the restore (a read-only file system: every fix after would fail the same way).
func (p *Plan) keepPresent(t *destTree, e *archive.Entry, fix bool, res *Result) error {
	if p.place(e, p.existing[e.Name].id) {
		p.mu.Lock()
		p.kept[e.Name] = true
		p.mu.Unlock()
	}
	p.restored(e)
	var err error
	if fix {
		err = p.fixMeta(t, e)
	}
	switch {
	case isFatal(err):
		return fmt.Errorf("%s: %w", format.QuoteName(e.Name), err)
	case err != nil:
		res.Failed = append(res.Failed, archive.Problem{Entry: e.Name, Reason: err.Error()})
	default:
		res.Present++
	}
	return nil
}

// errNotInPlace says why a file's metadata were left alone.
const errNotInPlace = "owner, mode and mtime not set in place, where they would change the other names too"

// errOthersMayWrite is why the metadata of a file kept as present are not given in place
// when another user could write to it: its bytes were checked before, and whoever holds it
// open for writing could change them between that check and the chown or chmod, so a
// setuid root program (or merely a file given to its recorded owner) would hold their
// bytes. A write after the chmod cannot do that: the kernel clears setuid, setgid and
// security.capability on a write by anyone but root.
var errOthersMayWrite = errors.New("another user than root may write to it (its owner, or group or others): an owner, group, setuid or setgid bit or file capability it lacks is not given in place, where its content could change while they are given")

// inPlaceRisk says why e's owner, mode and mtime must not be given in place to a file of
// owner uid, group gid, mode and nlink names, or nil. Only where the restore gives owners
// (as root) is anything given that another user could abuse: a file only root may write
// gets anything in place; any other only what grants nothing (its mode without setuid or
// setgid, its mtime). The other names of a hard link change with it whoever runs.
func (p *Plan) inPlaceRisk(e *archive.Entry, uid, gid, mode uint32, nlink uint64) error {
	if nlink > 1 {
		return fmt.Errorf("a hard link (%d names): %s", nlink, errNotInPlace)
	}
	want, wantGID, ok := p.owner(e)
	if !ok || uid == 0 && mode&0o022 == 0 {
		return nil
	}
	if int(uid) != want || int(gid) != wantGID || p.perm(e)&(unix.S_ISUID|unix.S_ISGID) != 0 || p.givesCapability(e) {
		return errOthersMayWrite
	}
	return nil
}

// givesCapability says whether restoring e's attributes gives it a file capability.
func (p *Plan) givesCapability(e *archive.Entry) bool {
	if !p.opts.Xattrs || p.index == nil {
		return false
	}
	m := e.RecordedMeta(p.index)
	if m == nil {
		return false
	}
	_, ok := m.Xattrs["security.capability"]
	return ok
}

func (p *Plan) fixMeta(t *destTree, e *archive.Entry) error {
	dfd, err := t.dir(parentOf(e.Name), false)
	if err != nil {
		return err
	}
	base := e.Name[strings.LastIndexByte(e.Name, '/')+1:]
	fd, err := eintr.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// The plan saw a regular file of one name; what the name holds now is checked again: the
	// same file (another put there since is not this restore's to change), of one name.
	var st unix.Stat_t
	if err := eintr.Fstat(fd, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return errors.New("no longer a regular file")
	case nodeOf(&st) != p.existing[e.Name].id:
		return errReplaced
	}
	if risk := p.inPlaceRisk(e, st.Uid, st.Gid, st.Mode, uint64(st.Nlink)); risk != nil {
		p.warn(e, risk)
		return nil
	}
	warn, err := p.fdMeta(fd, e, nil, false)
	if err != nil {
		return err
	}
	p.warn(e, warn...)
	if !p.sameMtime(e, time.Unix(st.Mtim.Unix())) {
		if err := futimens(fd, p.mtime(e)); err != nil {
			return err
		}
	}
	if id, err := fdID(fd); err == nil {
		p.place(e, id) // as relink will find it
	}
	return nil
}

// checkDirMeta notes an archived folder that the destination holds with another owner, mode
// or mtime, or other attributes (compared as a file kept as present is: an ACL the archive
// does not record may grant another user the folder): Run sets them, as for a folder it
// creates.
func (p *Plan) checkDirMeta(e *archive.Entry) {
	f, err := p.openDest(e.Name)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() || p.sameMeta(e, info) && p.sameXattrs(e, int(f.Fd())) {
		return
	}
	p.fixDirs[e.Name] = true
	p.FixUps = append(p.FixUps, e.StoredName())
}
