package walker

import (
	"io/fs"
	"sync/atomic"
)

// aheadFrom is the fewest names a directory needs for a second goroutine to stat some of
// them: below it, starting one costs about what it saves. aheadMost is the most it is given
// at once: a directory of more is taken in parts of that many, so that the results waiting
// for the walk stay few (a FileInfo is some 200 bytes) whatever the directory holds.
const (
	aheadFrom = 16
	aheadMost = 1024
)

// statsAhead stats a directory's names from the last one back on a goroutine of its own,
// while the walk stats and visits them from the first: the two meet in between, and each
// name is stat'ed once, by whichever came to it first. Every lstat is a system call (some
// 3.5 µs on the bench machine), and the walk's goroutine is the longest chain of a run whose
// files are copied from its reference (on the bench corpus 0.13 s of a 0.7 s run in lstat),
// while the other core has room.
type statsAhead struct {
	d     *dir // held for the goroutine by whichever claims the last name (see claim)
	taken []atomic.Bool
	infos []fs.FileInfo
	errs  []error
	stop  atomic.Bool
	done  chan struct{} // closed when the goroutine has stat'ed its last name and let d go
}

// statAhead starts stat-ing names (of d, at most aheadMost) from the end; nil when there
// are too few. d is held for the goroutine, and let go as soon as the goroutine is done
// with it, or can be known never to use it (see claim): a directory stays open no longer
// than the walk is in it, or the goroutine in a stat.
func (w Walker) statAhead(d *dir, names []string, stored func(string) string) *statsAhead {
	if len(names) < aheadFrom {
		return nil
	}
	s := &statsAhead{
		d:     d,
		taken: make([]atomic.Bool, len(names)),
		infos: make([]fs.FileInfo, len(names)),
		errs:  make([]error, len(names)),
		done:  make(chan struct{}),
	}
	d.hold()
	go s.run(w, names, stored)
	return s
}

// run stats names from the last one back, until it comes to one the walk has taken or the
// walk has left. It uses d only once it has claimed the last name, and only then lets d go.
func (s *statsAhead) run(w Walker, names []string, stored func(string) string) {
	defer close(s.done)
	last := len(names) - 1
	if s.stop.Load() || !s.taken[last].CompareAndSwap(false, true) {
		return // the walk claimed the last name (or left, and claims it in end): it let d go
	}
	defer s.d.release()
	for i := last; i >= 0; i-- {
		if i < last && (s.stop.Load() || !s.taken[i].CompareAndSwap(false, true)) {
			return
		}
		s.infos[i], s.errs[i] = w.stat(s.d, names[i], stored(names[i]))
	}
}

// take reports whether name i is the walk's to stat; when it is not, it waits until the
// goroutine has stat'ed it (and every name after it).
func (s *statsAhead) take(i int) bool {
	if s == nil || s.claim(i) {
		return true
	}
	<-s.done
	return false
}

// claim claims name i for the walk. The goroutine may not have run yet: a walk that nothing
// makes wait (symlinks skipped, a dry run) can take every name first, and go on to the next
// directory. So when the walk claims the last name, which the goroutine must claim before
// it uses d, d is let go for it here, at once: not when it gets to run, which kept every
// such directory of the tree open (under a small ulimit -n, the rest were lost).
func (s *statsAhead) claim(i int) bool {
	if !s.taken[i].CompareAndSwap(false, true) {
		return false
	}
	if i == len(s.taken)-1 {
		s.d.release()
	}
	return true
}

// result is what the goroutine found for name i, once take(i) said it was not the walk's.
func (s *statsAhead) result(i int) (fs.FileInfo, error) { return s.infos[i], s.errs[i] }

// end stops the goroutine early when the walk leaves the directory before its last name,
// and lets d go for it when it has not claimed the last name yet (it never will).
func (s *statsAhead) end() {
	if s != nil {
		s.stop.Store(true)
		s.claim(len(s.taken) - 1)
	}
}
