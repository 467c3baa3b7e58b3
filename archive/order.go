package archive

import (
	"cmp"
	"fmt"
	"io/fs"
	"strings"

	"backup/format"
)

// maxNameLen is the longest name a zip entry holds: its length is a 16-bit field. A walk
// relative to folder descriptors meets longer paths, which Linux allows.
const maxNameLen = 1<<16 - 1

var errNameTooLong = fmt.Errorf("name longer than the %d bytes a zip entry holds", maxNameLen)

// checkLength says why the stored name (a directory's with its slash) cannot be stored.
func checkLength(stored string) error {
	if len(stored) > maxNameLen {
		return errNameTooLong
	}
	return nil
}

// addLost queues, in walk order, a warning that the entry name was not stored because of
// cause: the path is lost, and the run goes on.
func (w *Writer) addLost(name string, info fs.FileInfo, cause error) error {
	it := &item{name: name, info: info, done: make(chan struct{})}
	it.out.warn = &fs.PathError{Op: format.OpStore, Path: name, Err: cause}
	close(it.done)
	return w.add(it)
}

// nameOrder makes two entries of one name impossible without holding every name (a million
// files would make that set tens of MB): entries must come in walk order. Within one
// top-level name (one SOURCE) each name must sort after the one before, component by
// component, so that a directory comes before what it holds, as a walk of sorted
// directories gives them; a top-level name, once left, never comes back. It holds the last
// name and the top-level names only. The manifest's name is reserved, and every name must
// be one CheckName accepts from Unix, so that verify never refuses an archive backup made.
type nameOrder struct {
	last string
	tops map[string]bool
}

// next accepts name as the next entry, or says why it cannot be stored.
func (o *nameOrder) next(name string) error {
	if err := CheckName(name, HostUnix); err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	top, _, _ := strings.Cut(name, "/")
	lastTop, _, _ := strings.Cut(o.last, "/")
	switch {
	case top == format.ManifestName:
		return fmt.Errorf("entry %q: %s is the manifest's name", name, format.ManifestName)
	case o.last != "" && top == lastTop:
		if compareNames(o.last, name) >= 0 {
			return fmt.Errorf("entry %q after %q: entries must come in walk order, each name once", name, o.last)
		}
	case o.tops[top]:
		return fmt.Errorf("entry %q: entries below %s came before, and others since", name, top)
	}
	if o.tops == nil {
		o.tops = map[string]bool{}
	}
	o.tops[top] = true
	o.last = name
	return nil
}

// compareNames compares stored names component by component: byte by byte, with "/" below
// every other byte (a name holds no NUL), so that "a/x" sorts before "a!b" as a walk of
// sorted directories meets them.
func compareNames(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		switch {
		case ca == cb:
			continue
		case ca == '/':
			return -1
		case cb == '/':
			return 1
		}
		return cmp.Compare(ca, cb)
	}
	return cmp.Compare(len(a), len(b))
}
