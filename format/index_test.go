package format

import "testing"

// TestIndex: lists out of order are sorted in place, and a path listed twice finds its
// first record, as verify, the read-back and restore all rely on.
func TestIndex(t *testing.T) {
	m := &Manifest{
		Files:    []File{{Path: "b", Size: 1}, {Path: "a", Size: 2}, {Path: "b", Size: 3}},
		Dirs:     []Dir{{Path: "d2"}, {Path: "d1"}},
		Symlinks: []Symlink{{Path: "l", Target: "first"}, {Path: "l", Target: "second"}},
	}
	x := NewIndex(m)
	if m.Files[0].Path != "a" || m.Dirs[0].Path != "d1" {
		t.Errorf("lists not sorted in place: %v %v", m.Files, m.Dirs)
	}
	if f, ok := x.File("b"); !ok || f.Size != 1 {
		t.Errorf("File(b) = %v, %v; want the first record, size 1", f, ok)
	}
	if l, ok := x.Symlink("l"); !ok || l.Target != "first" {
		t.Errorf("Symlink(l) = %v, %v; want the first record", l, ok)
	}
	if i := x.FindDir("d2"); i != 1 {
		t.Errorf("FindDir(d2) = %d, want 1", i)
	}
	for name, got := range map[string]int{"file": x.FindFile("c"), "dir": x.FindDir("a"), "symlink": x.FindSymlink("a")} {
		if got != -1 {
			t.Errorf("Find of a %s not listed = %d, want -1", name, got)
		}
	}
	if _, ok := x.File("l"); ok {
		t.Error("File found a symlink's record")
	}
}
