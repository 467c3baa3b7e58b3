package archive

import (
	"os/user"
	"strconv"
	"sync"

	"backup/format"
)

// Owners names owner numbers, remembering each answer: a tree of a million files has a
// handful of owners, and each lookup reads /etc/passwd or /etc/group. Its methods are safe
// for concurrent use.
type Owners struct {
	mu            sync.Mutex
	users, groups map[uint32]string
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
