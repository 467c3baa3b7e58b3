package report

import (
	"testing"

	"backup/format"
)

// TestLinkGroups numbers hard-link groups by their first member in path order, drops a group
// of which one file only was stored, and counts groups, symlinks and dirs in the receipt.
func TestLinkGroups(t *testing.T) {
	r := NewRecorder(Policy{})
	for _, f := range []format.File{{Path: "app/z", Link: 7}, {Path: "app/b", Link: 9}, {Path: "app/a", Link: 7},
		{Path: "app/alone", Link: 3}, {Path: "app/c", Link: 9}, {Path: "app/plain"}} {
		r.File(f)
	}
	r.Symlink(format.Symlink{Path: "app/l", Target: "/"})
	r.Dir(format.Dir{Path: "app"})
	got := map[string]int{}
	for _, f := range r.Manifest("v").Files {
		got[f.Path] = f.Link
	}
	want := map[string]int{"app/a": 1, "app/z": 1, "app/b": 2, "app/c": 2, "app/alone": 0, "app/plain": 0}
	for name, link := range want {
		if got[name] != link {
			t.Errorf("%s: link %d, want %d (all: %v)", name, got[name], link, got)
		}
	}
	c := r.Receipt(Run{}).Counts
	if c.LinkGroups != 2 || c.Symlinks != 1 || c.Dirs != 1 || c.Files != 6 {
		t.Errorf("counts %+v, want 2 link groups, 1 symlink, 1 dir, 6 files", c)
	}
}
