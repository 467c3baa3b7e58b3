package restore

import (
	"os/user"
	"strconv"

	"backup/format"
)

// ownerIDs translates the owner names a manifest records into this system's numbers,
// remembering each answer: a tree of a million files has a handful of owners, and each
// lookup reads /etc/passwd or /etc/group. One plan uses it, from one goroutine.
type ownerIDs struct {
	users, groups map[string]int64 // -1: the name is unknown here
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
