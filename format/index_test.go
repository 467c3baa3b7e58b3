package format

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

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

// TestIndexFindAnyOrder: whatever order paths are asked in (the archive's order is not
// quite the sorted one), FindFile gives the first record of each and -1 for the others: the
// record tried first never answers wrongly, a path listed twice included.
func TestIndexFindAnyOrder(t *testing.T) {
	paths := []string{"a-b", "a.txt", "a/b", "a/b", "a/b/c", "a/c", "b", "b", "b", "b/x", "z"}
	m := &Manifest{}
	for _, p := range paths {
		m.Files = append(m.Files, File{Path: p})
	}
	x := NewIndex(m)
	asked := append(slices.Clone(paths), "", "a", "a/", "b/w", "zz")
	orders := [][]string{paths, {"a/b", "a/b/c", "a/b", "b", "b", "a-b", "b/x", "z", "b"}, asked}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		o := slices.Clone(asked)
		rng.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		orders = append(orders, o)
	}
	for _, order := range orders {
		for _, p := range order {
			if got, want := x.FindFile(p), slices.Index(paths, p); got != want {
				t.Fatalf("asked in the order %q: FindFile(%q) = %d, want %d", order, p, got, want)
			}
		}
	}
}

// TestFindSortedAgain: asking for the name just found, as a read-back does up to four
// times an entry, takes the key last found rather than a search.
func TestFindSortedAgain(t *testing.T) {
	keys := make([]string, 1<<12)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%05d", i)
	}
	var next Hints
	calls := 0
	key := func(i int) string { calls++; return keys[i] }
	for _, want := range []int{0, 1, 2000, 4095} {
		if got := FindSorted(len(keys), keys[want], key, &next); got != want {
			t.Fatalf("FindSorted(%q) = %d, want %d", keys[want], got, want)
		}
		calls = 0
		if got := FindSorted(len(keys), keys[want], key, &next); got != want || calls > 4 {
			t.Errorf("FindSorted(%q) again = %d after %d keys read, want %d after at most 4", keys[want], got, calls, want)
		}
	}
}

// TestFindSortedReaders: readers that each go through the list in order from a place of
// their own, as restore's and verify's workers do, each keep their place: a search only for
// each one's first find. One place shared made every find of one reader after the other's
// a search.
func TestFindSortedReaders(t *testing.T) {
	keys := make([]string, 1<<12)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%05d", i)
	}
	var h Hints
	calls := 0
	key := func(i int) string { calls++; return keys[i] }
	starts := []int{0, 1000, 2000, 3000}
	searches := 0
	for step := range 900 {
		for _, start := range starts {
			want := start + step
			calls = 0
			if got := FindSorted(len(keys), keys[want], key, &h); got != want {
				t.Fatalf("FindSorted(%q) = %d, want %d", keys[want], got, want)
			}
			if calls > 8 {
				searches++
			}
		}
	}
	if searches != len(starts) {
		t.Errorf("%d readers made %d searches in %d finds, want one each", len(starts), searches, 900*len(starts))
	}
}
