package archive

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestReferenceFind: find gives the index of every name and fails for every other, whatever
// order it is asked in (the walk's order is not quite the sorted one: "a/b" sorts after
// "a.txt" but is walked before it), so the record it tries first never decides wrongly.
func TestReferenceFind(t *testing.T) {
	names := []string{"a-b", "a.txt", "a/b", "a/b/c", "a/c", "b", "b/x", "c\x00", "z"}
	ref := &Reference{}
	for _, n := range names {
		ref.files = append(ref.files, refFile{nameOff: uint32(len(ref.names)), nameLen: uint32(len(n))})
		ref.names += n
	}
	asked := append(slices.Clone(names), "", "a", "a/", "a/b/", "b/w", "c", "zz", "\xff")
	walked := []string{"a/b", "a/b/c", "a/c", "a-b", "a.txt", "b", "b/x", "c\x00", "z"}
	orders := [][]string{names, walked, asked}
	for range 20 {
		o := slices.Clone(asked)
		rand.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		orders = append(orders, o)
	}
	for _, order := range orders {
		for _, name := range order {
			want := slices.Index(names, name)
			i, ok := ref.find(name)
			if ok != (want >= 0) || ok && i != want {
				t.Fatalf("asked in the order %q: find(%q) = %d, %v; want %d", strings.Join(order, " "), name, i, ok, want)
			}
		}
	}
}
