package archive

import (
	"cmp"
	"slices"
)

// The largest entries go to the workers first, before the rest in archive order: an entry is
// read by one worker whatever its size, so a large one met last (a disk image sorted after
// the rest of the tree) would leave the other workers idle while it is read. An entry is
// large when it holds more than 1/(4 jobs) of the archive's bytes; there are at most 4 jobs
// of them. Their records are compared with the manifest in archive order all the same, when
// the dispatcher reaches them, so the SHA-256 their data must have is known only then: the
// worker returns the SHA-256 it found, and checkAll compares the two once all is done.

// lateWant is the SHA-256 (hex) an entry sent early must have, set by the dispatcher when
// it reaches the entry in archive order; "" when there is nothing to compare with.
type lateWant struct{ want string }

// lateSum is what a worker found of an entry sent early whose data read without error.
type lateSum struct {
	index int
	name  string
	got   string // SHA-256 (hex)
	bytes int64
	want  *lateWant
}

// sendEarly hands the largest file entries to the workers, largest first, each in a batch
// of its own; it returns their wants by index, or false once ctx is done.
func (r *Reader) sendEarly(work *batcher, jobs int) (map[int]*lateWant, bool) {
	if jobs < 2 || work.oneByOne {
		return nil, true
	}
	least := r.size / int64(4*jobs)
	var large []int
	for i, e := range r.Entries {
		if !e.IsDir && e.Kind == "" && e.hdr.csize > 0 && e.hdr.csize >= uint64(least) {
			large = append(large, i)
		}
	}
	slices.SortStableFunc(large, func(a, b int) int {
		return cmp.Compare(r.Entries[b].hdr.csize, r.Entries[a].hdr.csize)
	})
	early := map[int]*lateWant{}
	for _, i := range large[:min(len(large), 4*jobs)] {
		early[i] = new(lateWant)
		if !work.add(entryJob{index: i, entry: r.Entries[i], late: early[i]}) || !work.flush() {
			return nil, false
		}
	}
	return early, true
}

// compareLate adds to found what the late sums of ws show wrong, and their bytes to res.
func compareLate(res *VerifyResult, ws []workerResult, found []foundProblem) []foundProblem {
	for _, w := range ws {
		for _, s := range w.late {
			if s.want.want != "" && s.got != s.want.want {
				found = append(found, foundProblem{index: s.index, step: 1, Problem: Problem{Entry: s.name, Reason: ErrSHA256.Error()}})
				continue
			}
			res.Bytes += s.bytes
		}
	}
	return found
}
