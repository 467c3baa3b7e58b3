package restore

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttackMountChangeRaceQuiet: /proc/self/mountinfo reports POLLPRI once per change of
// the mount table, to the first poll after it. A guard that polled with no lock, storing
// tripped only after its poll returned, let a second worker polling in between find it
// quiet, and rename a file into a folder a mount (nobody's FUSE mount over his own folder)
// had just covered. Workers ask quiet() in a loop (as a restore's --jobs
// do, twice per file) while a mount comes; a quiet() begun after the mount that returned
// the count of mount changes from before it means a worker went on with the checks skipped
// although a folder may now be covered. Correct: never, in any of the rounds.
func TestAttackMountChangeRaceQuiet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	root := t.TempDir()
	a := filepath.Join(root, "a")
	if err := os.Mkdir(a, 0o755); err != nil {
		t.Fatal(err)
	}
	rfd := openDir(t, root)
	hits := 0
	for round := 0; round < 200 && hits == 0; round++ {
		g := newMoveGuard(rfd)
		if g.tripped.Load() {
			t.Skipf("no move guard on %s", root)
		}
		var mounted, stop, bad atomic.Bool
		before, _ := g.quiet()
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					after := mounted.Load()
					if n, ok := g.quiet(); ok && n == before && after {
						bad.Store(true)
					}
				}
			}()
		}
		time.Sleep(200 * time.Microsecond)
		if err := unix.Mount("none", a, "tmpfs", 0, "size=64k"); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Skip(err)
		}
		mounted.Store(true)
		time.Sleep(200 * time.Microsecond)
		stop.Store(true)
		wg.Wait()
		unix.Unmount(a, unix.MNT_DETACH)
		g.close()
		if bad.Load() {
			hits++
			t.Errorf("round %d: a quiet() begun after a mount came did not count it", round)
		}
	}
}
