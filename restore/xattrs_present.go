package restore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"backup/archive"
	"backup/eintr"
	"backup/format"
	"backup/walker"
)

// The attributes of a file kept as already present. With Xattrs, such a file holds the
// recorded attributes, or its metadata differ and are set as its owner, mode and mtime are
// (see isPresent). With Force too (the before-state holds what the file had), and where the
// archive's run read the file's attributes (an empty set, not none, when it had none), it
// holds no other attribute of those restore sets: restoring a before-state (an undo) takes
// away an attribute or ACL that the restore undone gave. An archive made without --xattrs
// records none, which says nothing of what the file had: nothing is taken away then.

// managed reports whether restore sets (and so compares and, with Force, removes) the
// attribute name: user.* and the POSIX ACLs always, security.* and trusted.* only where the
// setuid rule lets it set them (privileged).
func managed(name string, privileged bool) bool {
	switch {
	case kernelLabels[name]:
		return false
	case strings.HasPrefix(name, "user."), strings.HasPrefix(name, aclPrefix):
		return true
	case isPrivileged(name):
		return privileged
	}
	return false
}

// kernelLabels are the security attributes of the system the file is on (its SELinux
// label, the integrity modules' hashes), not of the file's data: an archive from another
// system may record other ones or none, and taking them away would break the system.
var kernelLabels = map[string]bool{"security.selinux": true, "security.ima": true, "security.evm": true}

// privileged says whether e's privileged attributes are set (see xattrs).
func (p *Plan) privileged(e *archive.Entry) bool {
	_, _, owned := p.owner(e)
	return p.opts.SamePermissions && owned
}

// recordedXattrs are the attributes the manifest records of e; none without a record.
func (p *Plan) recordedXattrs(e *archive.Entry) map[string][]byte {
	if m := e.RecordedMeta(p.index); m != nil {
		return m.Xattrs
	}
	return nil
}

// sameXattrs reports whether the file open as fd holds e's recorded attributes (of those
// restore sets) and, with Force, no other.
func (p *Plan) sameXattrs(e *archive.Entry, fd int) bool {
	if !p.opts.Xattrs || p.index == nil {
		return true
	}
	recorded, privileged := p.recordedXattrs(e), p.privileged(e)
	have, err := walker.FdXattrs(fd, e.Name)
	if err != nil {
		return false
	}
	for name, v := range recorded {
		if !managed(name, privileged) {
			continue
		}
		got, ok := have[name]
		if ok && bytes.Equal(got, p.xattrValue(name, v)) || !ok && unsettable(fd, name) {
			continue
		}
		return false
	}
	return !p.opts.Force || recorded == nil || len(unrecorded(have, recorded, privileged)) == 0
}

// unrecorded are the names in have of the attributes restore sets that recorded lacks, in
// the order they are removed (sorted, the ACLs last).
func unrecorded(have, recorded map[string][]byte, privileged bool) []string {
	var names []string
	for name := range have {
		if _, ok := recorded[name]; !ok && managed(name, privileged) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return aclsLast(names)
}

// unsettable reports whether the file system of the file open as fd holds no attribute of
// name's kind (ramfs holds no user.*), so that a file there is the same without it: else
// each restore would set it again, in vain. Asked as a replace of the attribute, which it
// lacks: a file system that holds such attributes answers that there is none to replace
// (ENODATA), and nothing is changed either way.
func unsettable(fd int, name string) bool {
	return errors.Is(eintr.Fsetxattr(fd, name, nil, unix.XATTR_REPLACE), unix.ENOTSUP)
}

// removeOtherXattrs removes from the file open as fd the attributes restore sets that e's
// record does not hold: with Force, or on a file or folder this run made (fresh), which
// holds only what the kernel gave it, an ACL inherited from its folder's default ACL (one
// granting another user what the archive does not). prepare is called before each removal.
// It returns what it could not remove, one warning each.
func (p *Plan) removeOtherXattrs(fd int, e *archive.Entry, fresh bool, prepare func() error) []error {
	if !p.opts.Xattrs || !p.opts.Force && !fresh || p.index == nil {
		return nil
	}
	recorded, privileged := p.recordedXattrs(e), p.privileged(e)
	if recorded == nil {
		return nil // not read by the archive's run: what the file had is not known
	}
	have, err := walker.FdXattrs(fd, e.Name)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, name := range unrecorded(have, recorded, privileged) {
		err := prepare()
		if err == nil {
			err = unix.Fremovexattr(fd, name)
		}
		if err != nil && !errors.Is(err, unix.ENODATA) {
			errs = append(errs, fmt.Errorf("remove %s: %w", format.QuoteName(name), err))
		}
	}
	return errs
}
