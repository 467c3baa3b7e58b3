package archive

import (
	"os/user"
	"strconv"
	"sync"

	"backup/format"
)

// Owners translates between owner numbers and names, remembering each answer: a tree of a
// million files has a handful of owners, and each lookup reads /etc/passwd or /etc/group.
// Its methods are safe for concurrent use.
type Owners struct {
	mu                sync.Mutex
	users, groups     map[uint32]string
	userIDs, groupIDs map[string]int64 // -1: the name is unknown here
}

// Name fills in m's user and group names, when this system knows the numbers.
func (o *Owners) Name(m *format.Meta) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m.User = cached(&o.users, m.UID, func(id string) (string, error) {
		u, err := user.LookupId(id)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
	m.Group = cached(&o.groups, m.GID, func(id string) (string, error) {
		g, err := user.LookupGroupId(id)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func cached(m *map[uint32]string, id uint32, lookup func(string) (string, error)) string {
	if *m == nil {
		*m = map[uint32]string{}
	}
	name, ok := (*m)[id]
	if !ok {
		name, _ = lookup(strconv.FormatUint(uint64(id), 10)) // unknown: no name, the number stands
		(*m)[id] = name
	}
	return name
}

// IDs returns the uid and gid to restore m with: the numbers this system gives its names,
// each falling back to the recorded number when the name is unknown here or numeric is set
// (as GNU tar does).
func (o *Owners) IDs(m *format.Meta, numeric bool) (uid, gid uint32) {
	if numeric {
		return m.UID, m.GID
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	uid = byName(&o.userIDs, m.User, m.UID, func(name string) (string, error) {
		u, err := user.Lookup(name)
		if err != nil {
			return "", err
		}
		return u.Uid, nil
	})
	gid = byName(&o.groupIDs, m.Group, m.GID, func(name string) (string, error) {
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
