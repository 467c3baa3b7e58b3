package restore

import (
	"encoding/binary"
	"os/user"
	"slices"
	"strconv"

	"backup/format"
)

// ownerIDs translates the owner names a manifest records into this system's numbers,
// remembering each answer: a tree of a million files has a handful of owners, and each
// lookup reads /etc/passwd or /etc/group. One plan uses it, from one goroutine.
type ownerIDs struct {
	users, groups map[string]int64 // -1: the name is unknown here
	// aclUsers and aclGroups map the numbers the manifest records names for to this
	// system's numbers (see numbers); nil until asked.
	aclUsers, aclGroups map[uint32]uint32
}

// ids returns the uid and gid to restore m with: the numbers this system gives its names,
// each falling back to the recorded number when the name is unknown here or numeric is set
// (as GNU tar does).
func (o *ownerIDs) ids(m *format.Meta, numeric bool) (uid, gid uint32) {
	if numeric {
		return m.UID, m.GID
	}
	uid = byName(&o.users, m.User, m.UID, func(name string) (string, error) {
		u, err := user.Lookup(name)
		if err != nil {
			return "", err
		}
		return u.Uid, nil
	})
	gid = byName(&o.groups, m.Group, m.GID, func(name string) (string, error) {
		g, err := user.LookupGroup(name)
		if err != nil {
			return "", err
		}
		return g.Gid, nil
	})
	return uid, gid
}

func byName(m *map[string]int64, name string, recorded uint32, lookup func(string) (string, error)) uint32 {
	if name == "" {
		return recorded
	}
	if *m == nil {
		*m = map[string]int64{}
	}
	id, ok := (*m)[name]
	if !ok {
		id = -1
		if s, err := lookup(name); err == nil {
			if n, err := strconv.ParseUint(s, 10, 32); err == nil {
				id = int64(n)
			}
		}
		(*m)[name] = id
	}
	if id < 0 {
		return recorded
	}
	return uint32(id)
}

// The POSIX ACL attributes' binary form (linux/posix_acl_xattr.h): a 4-byte version, then
// 8-byte entries of a tag, permissions and a uid or gid, little-endian.
const (
	aclHeaderSize = 4
	aclEntrySize  = 8
	aclTagUser    = 0x02
	aclTagGroup   = 0x08
)

// aclValue is the recorded ACL v as restore sets it: where owners go by name, each named
// user or group entry whose number the manifest records a name for (the owner of one of its
// entries) gets that name's number here, as the owners do (and as GNU tar, which stores ACL
// entries by name, gives them); else the recorded number. An ACL entry for bin (4242 where
// the archive was made) must not grant the uid 4242 of this system, with the file bin's.
func (p *Plan) aclValue(v []byte) []byte {
	if p.opts.NumericOwner || p.index == nil || len(v) < aclHeaderSize || (len(v)-aclHeaderSize)%aclEntrySize != 0 {
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	users, groups := p.owners.numbers(p.index.Manifest())
	out := slices.Clone(v)
	for i := aclHeaderSize; i < len(out); i += aclEntrySize {
		ids := users
		switch binary.LittleEndian.Uint16(out[i:]) {
		case aclTagUser:
		case aclTagGroup:
			ids = groups
		default:
			continue
		}
		if id, ok := ids[binary.LittleEndian.Uint32(out[i+4:])]; ok {
			binary.LittleEndian.PutUint32(out[i+4:], id)
		}
	}
	return out
}

// numbers maps each uid and gid the manifest m records a name for to this system's number
// for that name (the first name recorded for a number), computed once.
func (o *ownerIDs) numbers(m *format.Manifest) (users, groups map[uint32]uint32) {
	if o.aclUsers != nil {
		return o.aclUsers, o.aclGroups
	}
	o.aclUsers, o.aclGroups = map[uint32]uint32{}, map[uint32]uint32{}
	add := func(meta *format.Meta) {
		if _, ok := o.aclUsers[meta.UID]; !ok && meta.User != "" {
			o.aclUsers[meta.UID], _ = o.ids(&format.Meta{UID: meta.UID, User: meta.User}, false)
		}
		if _, ok := o.aclGroups[meta.GID]; !ok && meta.Group != "" {
			_, o.aclGroups[meta.GID] = o.ids(&format.Meta{GID: meta.GID, Group: meta.Group}, false)
		}
	}
	for i := range m.Files {
		if m.Files[i].Meta != nil {
			add(m.Files[i].Meta)
		}
	}
	for i := range m.Dirs {
		add(&m.Dirs[i].Meta)
	}
	for i := range m.Symlinks {
		add(&m.Symlinks[i].Meta)
	}
	return o.aclUsers, o.aclGroups
}
