package restore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBelowFirst: folders' times are set in post-order, every folder after all below it,
// and a folder's subtree together, so that the folder set next is mostly open already.
func TestBelowFirst(t *testing.T) {
	want := []string{"a/b/c", "a/b/d", "a/b", "a/b c", "a/b.d/e", "a/b.d", "a/bb", "a", "a!", "ab", "z/y/x", "z/y", "z"}
	got := slices.Clone(want)
	for range 100 {
		rand.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, belowFirst)
		if !slices.Equal(got, want) {
			t.Fatalf("sorted %q, want %q", got, want)
		}
	}
	for i, a := range want {
		for _, b := range want[i+1:] {
			if strings.HasPrefix(b, a+"/") {
				t.Errorf("%q is before %q, which lies below it", a, b)
			}
		}
	}
}
