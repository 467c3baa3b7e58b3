package restore

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
)

// What restore gives back beside names, data, modes and mtimes: owners (as root, unless
// told not to), setuid, setgid and sticky bits (only with the owners, and only when asked;
// a folder's sticky bit always), and extended attributes (when asked). The order per entry is chown, attributes, chmod,
// mtime: chown clears the setuid bits and security.capability, so both come after it.

// owner returns the uid and gid to give e, and whether to give any: only as root, only
// with a v2 manifest that records them, and not with NoSameOwner.
func (p *Plan) owner(e *archive.Entry) (uid, gid int, ok bool) {
	if p.index == nil || p.opts.NoSameOwner || !p.asRoot {
		return 0, 0, false
	}
	m := e.RecordedMeta(p.index)
	if m == nil {
		return 0, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	u, g := p.owners.ids(m, p.opts.NumericOwner)
	return int(u), int(g), true
}

// perm is the mode to give e: its permission bits under the umask (Entry.Perm), a folder's
// sticky bit, plus its setuid, setgid and sticky bits when SamePermissions asks for them
// and its owner is restored too; never for a file that keeps the restoring user as its
// owner in place of another.
func (p *Plan) perm(e *archive.Entry) uint32 {
	perm := uint32(e.Perm(p.umask))
	if !p.asRoot {
		// A user other than root could not read back what it restored without its owner's
		// read bit (a re-run's check, the before-state of --force, the undo's): a 0000 file
		// comes back 0400, a 0000 folder dr-x------. Root reads everything, and gets 0000.
		perm |= 0o400
	}
	if e.IsDir && e.Mode&fs.ModeSticky != 0 {
		// The sticky bit grants nothing: it lets only an entry's owner remove or rename it in
		// the folder. A folder anyone may write to (/tmp in a system's backup) that lost it
		// would let anyone remove anyone's files there.
		perm |= unix.S_ISVTX
	}
	if !p.opts.SamePermissions {
		return perm
	}
	if _, _, ok := p.owner(e); !ok {
		return perm
	}
	for _, b := range []struct {
		mode fs.FileMode
		bit  uint32
	}{{fs.ModeSetuid, unix.S_ISUID}, {fs.ModeSetgid, unix.S_ISGID}, {fs.ModeSticky, unix.S_ISVTX}} {
		if e.Mode&b.mode != 0 {
			perm |= b.bit
		}
	}
	return perm
}

// mtime is e's mtime: the zip's whole seconds (or those the manifest records, when the zip's
// field cannot hold them), and the nanoseconds a v2 manifest records.
func (p *Plan) mtime(e *archive.Entry) time.Time {
	if p.index == nil {
		return e.Modified
	}
	return e.Mtime(e.RecordedMeta(p.index))
}

// sameMtime says whether have, the mtime of a file DEST holds, is e's as the archive records
// it: equal, or in the same second where the archive records whole seconds only (a manifest
// v1, written before mtime_nsec, or none): it does not say such a fraction is wrong, and a
// file of the tree the archive was made of is already as restored.
func (p *Plan) sameMtime(e *archive.Entry, have time.Time) bool {
	want := p.mtime(e)
	if have.Equal(want) {
		return true
	}
	return (p.index == nil || e.RecordedMeta(p.index) == nil) && have.Truncate(time.Second).Equal(want)
}

// xattrs sets e's recorded extended attributes through set, when Xattrs asks for them, in
// name order; it returns what could not be set, one warning each.
func (p *Plan) xattrs(e *archive.Entry, set func(name string, value []byte) error) []error {
	if !p.opts.Xattrs || p.index == nil {
		return nil
	}
	m := e.RecordedMeta(p.index)
	if m == nil {
		return nil
	}
	privileged := p.privileged(e)
	var errs []error
	for _, name := range aclsLast(slices.Sorted(maps.Keys(m.Xattrs))) {
		if !isOrdinary(name) && !privileged {
			errs = append(errs, fmt.Errorf("%s not set: only with --same-permissions, as root, with the recorded owner", format.QuoteName(name)))
			continue
		}
		if err := set(name, p.xattrValue(name, m.Xattrs[name])); err != nil {
			errs = append(errs, fmt.Errorf("set %s: %w", format.QuoteName(name), err))
		}
	}
	return errs
}

// xattrValue is the value restore gives the recorded attribute name: an ACL's named users
// and groups by name where owners go by name (see aclValue), any other as recorded.
func (p *Plan) xattrValue(name string, v []byte) []byte {
	if strings.HasPrefix(name, aclPrefix) {
		return p.aclValue(v)
	}
	return v
}

// aclPrefix begins the names of the POSIX ACLs, access and default.
const aclPrefix = "system.posix_acl_"

// aclsLast puts the POSIX ACLs after the other attribute names: setting an ACL sets the
// mode's bits from it, and may take away the owner's write bit the others need.
func aclsLast(names []string) []string {
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(aclRank(a), aclRank(b)) })
	return names
}

// aclRank orders a POSIX ACL (1) after any other attribute (0).
func aclRank(name string) int {
	if strings.HasPrefix(name, aclPrefix) {
		return 1
	}
	return 0
}

// isOrdinary reports whether the attribute is one restore sets without the setuid rule:
// user.* and the POSIX ACLs, which grant no more than permission bits do. Any other follows
// the rule: security.* and trusted.* (isPrivileged), and those of namespaces backup never
// reads, which only a made manifest records (system.cifs_ntsd_full, a file's whole Windows
// security descriptor on a CIFS mount, its owner among it).
func isOrdinary(name string) bool {
	return strings.HasPrefix(name, "user.") || strings.HasPrefix(name, aclPrefix)
}

// isPrivileged reports whether the attribute grants or marks privilege, as a setuid bit
// does (security.capability lets a program act as root in part), and so follows the
// setuid rule: set only with SamePermissions, as root, with the recorded owner.
func isPrivileged(name string) bool {
	return strings.HasPrefix(name, "security.") || strings.HasPrefix(name, "trusted.")
}

// fdMeta gives the file or folder open as fd its owner, mode and attributes. A failed chown
// or chmod is an error; attributes that cannot be set are returned as warn. With made, the
// file as this run created it, an owner or mode it has already is not set again; fresh says
// that this run made the file or folder (a file with made, a folder it created).
func (p *Plan) fdMeta(fd int, e *archive.Entry, made *unix.Stat_t, fresh bool) (warn []error, err error) {
	if uid, gid, ok := p.owner(e); ok {
		// Only an owner the file lacks is given: the kernel drops setuid bits and
		// security.capability on every chown, to the same owner too, and a file kept as
		// present whose mtime alone differs would lose what the restore does not set.
		have := made
		if have == nil {
			var st unix.Stat_t
			if err := eintr.Fstat(fd, &st); err == nil {
				have = &st
			}
		}
		if have == nil || int(have.Uid) != uid || int(have.Gid) != gid {
			if err := eintr.Fchown(fd, uid, gid); err != nil {
				return nil, chownError(err)
			}
		}
	}
	perm := p.perm(e)
	// The attributes before the mode. A user other than root sets user.* attributes only
	// on what its owner may write: a file made read-only (its mode, or the user's umask), or
	// one whose metadata is fixed in place, gets its owner's write bit first; an ACL sets
	// the mode too, so ACLs come last (see xattrs); the mode is set after them.
	writable := p.asRoot || made != nil && made.Mode&0o200 != 0
	changed := false // the mode since made: the write bit given, or an ACL's
	prepare := func() error {
		if !writable {
			if err := eintr.Fchmod(fd, perm|0o200); err != nil {
				return err
			}
			writable, changed = true, true
		}
		return nil
	}
	warn = p.xattrs(e, func(name string, v []byte) error {
		if err := prepare(); err != nil {
			return err
		}
		changed = changed || strings.HasPrefix(name, aclPrefix)
		return eintr.Fsetxattr(fd, name, v, 0)
	})
	// A file kept as present may hold others, and one made here may too: the kernel gives a
	// new file or folder an ACL from its folder's default ACL (its mode is set below).
	warn = append(warn, p.removeOtherXattrs(fd, e, fresh, func() error {
		changed = true
		return prepare()
	})...)
	// A chown clears the setuid and setgid bits, which made cannot have had.
	if changed || made == nil || made.Mode&07777 != perm {
		if err := eintr.Fchmod(fd, perm); err != nil {
			return nil, fmt.Errorf("chmod: %w", err)
		}
	}
	return warn, nil
}

// chownError is a failed chown of a restored path. Where the owner cannot be given at all
// (EINVAL: a container's root, whose user namespace maps no such id; EPERM: root squashed on
// NFS) every path fails alike, and the way out is said: the entry is not restored, as a
// file must not take another owner than the one recorded unless asked.
func chownError(err error) error {
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) {
		return fmt.Errorf("chown: %w (--no-same-owner restores without owners)", err)
	}
	return fmt.Errorf("chown: %w", err)
}

// linkMeta gives the symlink made, at name in the folder dfd, its owner (through its O_PATH
// descriptor) and attributes (by name, each after a check that the name holds it still),
// never following it.
func (p *Plan) linkMeta(dfd int, name string, made heldFile, e *archive.Entry) (warn []error, err error) {
	if uid, gid, ok := p.owner(e); ok {
		if err := eintr.Fchownat(made.fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, chownError(err)
		}
	}
	path := "/proc/self/fd/" + strconv.Itoa(dfd) + "/" + name
	return p.xattrs(e, func(attr string, v []byte) error {
		if err := checkTemp(dfd, name, made.id); err != nil {
			return err
		}
		return eintr.Lsetxattr(path, attr, v, 0)
	}), nil
}

// currentUmask returns the process's umask. It is read from /proc, because setting it to
// learn it would change it, for a moment, for every thread of the process.
func currentUmask() fs.FileMode {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Umask:")); ok {
				if m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32); err == nil {
					return fs.FileMode(m) & fs.ModePerm
				}
			}
		}
	}
	// Linux before 4.7 has no Umask line. Restore creates nothing while it looks.
	old := syscall.Umask(0)
	syscall.Umask(old)
	return fs.FileMode(old) & fs.ModePerm
}
