package walker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// manyNames makes n files in root/d, named so that their order is their number.
func manyNames(t *testing.T, root string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("f%05d", i))
	}
	paths := make([]string, n)
	for i, name := range names {
		paths[i] = "d/" + name
	}
	mkfiles(t, root, paths...)
	return names
}

// TestStatAheadEachNameOnce: in a directory large enough for a second goroutine to stat its
// names from the end, every name is still stat'ed exactly once and visited in order with
// its own result, a failed lstat (answered by fstat) included; and the second goroutine
// really stats ahead: the first name's lstat waits until the last name of its part is done.
// A directory of more than aheadMost names is taken in parts.
func TestStatAheadEachNameOnce(t *testing.T) {
	for _, n := range []int{3 * aheadFrom, 2*aheadMost + aheadFrom} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { statAheadEachNameOnce(t, n) })
	}
}

func statAheadEachNameOnce(t *testing.T, n int) {
	root := t.TempDir()
	names := manyNames(t, root, n)
	first, lastOfPart, last := names[0], names[min(n, aheadMost)-1], names[n-1]
	partDone := make(chan struct{})
	var mu sync.Mutex
	calls := map[string]int{}
	lstat := func(dirfd int, name string) (fs.FileInfo, error) {
		mu.Lock()
		calls[name]++
		mu.Unlock()
		switch name {
		case first:
			select {
			case <-partDone:
			case <-time.After(10 * time.Second):
				t.Error("the last name of the part was not stat'ed while the first one's lstat waited")
			}
		case lastOfPart:
			defer close(partDone)
		}
		if name == last {
			return nil, syscall.EOVERFLOW
		}
		return lstatAt(dirfd, name)
	}
	var got []string
	w := Walker{lstat: lstat, Visit: func(e Entry) error {
		var pe *fs.PathError
		switch {
		case e.Name == "r" || e.Err == nil && e.Info.Name() == filepath.Base(e.Name):
			got = append(got, e.Name)
		case errors.As(e.Err, &pe) && pe.Op == OpStat && pe.Path == e.Name && e.Info.Mode().IsRegular():
			got = append(got, e.Name+" (fstat)")
		default:
			t.Errorf("%s: info %v, err %v", e.Name, e.Info, e.Err)
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, "r"); err != nil {
		t.Fatal(err)
	}
	want := []string{"r", "r/d"}
	for _, n := range names {
		want = append(want, "r/d/"+n)
	}
	want[len(want)-1] += " (fstat)"
	if !slices.Equal(got, want) {
		t.Errorf("visited %d names, want %d in order (first difference at %d)", len(got), len(want), firstDifference(got, want))
	}
	for _, n := range names {
		if calls[n] != 1 {
			t.Errorf("%s stat'ed %d times, want once", n, calls[n])
		}
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStatAheadStopsWithTheWalk: a walk that leaves a directory early (Visit fails) stops
// the goroutine stat-ing its names from the end, which then closes the directory: it stats
// no name after the one it was at (without the stop, it would go on down to the walk's).
func TestStatAheadStopsWithTheWalk(t *testing.T) {
	root := t.TempDir()
	names := manyNames(t, root, 3*aheadFrom)
	last := names[len(names)-1]
	walked := make(chan struct{})
	var mu sync.Mutex
	var stated []string
	lstat := func(dirfd int, name string) (fs.FileInfo, error) {
		mu.Lock()
		stated = append(stated, name)
		mu.Unlock()
		if name == last {
			<-walked
		}
		return lstatAt(dirfd, name)
	}
	stop := errors.New("stop")
	w := Walker{lstat: lstat, Visit: func(e Entry) error {
		if e.Name == "r/d/"+names[2] {
			return stop
		}
		return nil
	}}
	open := openFDs(t)
	err := w.Walk(context.Background(), root, "r")
	close(walked)
	if !errors.Is(err, stop) {
		t.Fatalf("walk: %v, want the Visit's error", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) != open && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := openFDs(t); n != open {
		t.Errorf("%d descriptors open after the walk, %d before: the directory was not closed", n, open)
	}
	mu.Lock()
	defer mu.Unlock()
	// The goroutine may not have begun before the walk left; if it had, it was at the last
	// name.
	stated = slices.DeleteFunc(stated, func(n string) bool { return n == last })
	slices.Sort(stated)
	if want := []string{"d", names[0], names[1], names[2]}; !slices.Equal(stated, want) {
		t.Errorf("stat'ed %q and maybe %s, want %q", stated, last, want)
	}
}
