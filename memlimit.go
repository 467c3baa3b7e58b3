package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapHeadroom is the least the heap of a create, verify, restore or list may grow past
// what the last collection kept before the next one, once that is more than it. Each holds
// lists that grow with the files and are kept to the end (the entries and manifest of the
// archive read, ~400 to 470 MB at a million files; a create's central directory and
// manifest list, ~370 MB), and their garbage is per-file buffers. With Go's default (twice
// the live heap) a million-file verify grew to 975 MiB, a restore to 873 MiB; with this,
// ~570 MiB, at about 1.1 times the wall time. Below it (the benchmark corpus: tens of MB
// live) the GC target stands: Go's default, and gcPercent for create.
const heapHeadroom = 128 << 20

// limitMemory keeps the heap near what the run holds: after each collection, a soft memory
// limit (debug.SetMemoryLimit) of the live heap plus heapHeadroom, or an eighth more for a
// heap past 1 GiB, so that the collector does not run ever more often as a larger run's
// lists grow. The returned func lifts the limit. GOMEMLIMIT, when set, is the user's to say
// and left alone.
func limitMemory() (lift func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	l := new(limiter)
	// Nothing else may hold the tick: its finalizer runs only once it is unreachable.
	runtime.SetFinalizer(&gcTick{l: l}, (*gcTick).collected)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.stopped = true
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// limiter is shared by a gcTick and the func that lifts its limit; mu orders a limit set
// after a collection before the lift, never after it.
type limiter struct {
	mu      sync.Mutex
	stopped bool
}

// gcTick's finalizer runs after each collection that found it unreachable, which it makes
// reachable again by setting the finalizer anew: one call per collection.
type gcTick struct {
	l *limiter
}

func (t *gcTick) collected() {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.l.stopped {
		return
	}
	debug.SetMemoryLimit(memoryLimitFor(liveHeap()))
	runtime.SetFinalizer(t, (*gcTick).collected)
}

// memoryLimitFor is the soft limit for a live heap of live bytes.
func memoryLimitFor(live uint64) int64 {
	return int64(live + max(heapHeadroom, live/8))
}

// liveHeap is the heap the last collection kept, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxInt64 / 2 // unknown: no limit to speak of
	}
	return s[0].Value.Uint64()
}
