package walker

import (
	"path"
	"testing"
)

// TestChildNames: the names of a directory's entries are path.Join's of the directory's
// stored name and theirs, and Rel their path below the root, whatever the root's name,
// down three levels.
func TestChildNames(t *testing.T) {
	for _, root := range []string{"", ".", "a", "a/b", "/", "a//b", "./a", "a/", "..", "../x", "a/./b/.."} {
		e := Entry{Name: root}
		for _, name := range []string{"d", "e e", "f.", ".g"} {
			c := e.childNames().child(e, nil, name)
			wantRel := name
			if e.Rel != "" {
				wantRel = e.Rel + "/" + name
			}
			if want := path.Join(e.Name, name); c.Name != want || c.Rel != wantRel {
				t.Errorf("root %q: child %q of %q (rel %q) is %q, rel %q; want %q, rel %q", root, name, e.Name, e.Rel, c.Name, c.Rel, want, wantRel)
			}
			e = c
		}
	}
}
