package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemoryLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, heapHeadroom},
		{400 << 20, 400<<20 + heapHeadroom},
		{8 << 30, 9 << 30},
	} {
		if got := memoryLimitFor(c.live); got != c.want {
			t.Errorf("memoryLimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestLimitMemory: a collection sets the limit, and lifting it leaves none, so that
// nothing after a create or verify (or another test in this process) runs under it.
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	lift := limitMemory()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == math.MaxInt64 && time.Now().Before(deadline) {
		runtime.GC() // the finalizer runs on its own goroutine after the collection
		time.Sleep(10 * time.Millisecond)
	}
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		lift()
		t.Fatal("no memory limit set after collections")
	}
	lift()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit after lift = %d, want none", got)
	}
}
