package report

import (
	"testing"

	"backup/format"
)

// After Expect(n), recording n files makes no new list: the one made holds them all.
func TestRecorderExpect(t *testing.T) {
	const n = 10_000
	r := NewRecorder(Policy{})
	r.Expect(n)
	first := cap(r.files)
	for range n {
		r.File(format.File{Path: "a", Size: 1})
	}
	if first < n || cap(r.files) != first {
		t.Errorf("capacity %d after Expect(%d), %d after %d files; want one list of at least %d", first, n, cap(r.files), n, n)
	}
}
