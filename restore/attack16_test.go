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

// TestAttackMountChangeSeenByOneWorkerOnly: /proc/self/mountinfo reports POLLPRI once per
// change of the mount table, to the first poll after it (mounts_poll records the event it
// reported in the open file), and the guard now polls with no lock, storing tripped only
// after its poll returned. Two workers: A's quiet() polls first after a mount came (say
// nobody's FUSE mount over his own folder app/d1, TestAttackUserFuseMountOverOwnFolderUnnoticed),
// is told, and is about to store tripped; B's quiet() polls in that window (a preemption of A
// is enough) and is told nothing: B's check() returns quiet, verifies nothing, and B renames
// a file into the covered folder, while the name holds another file system's folder. The
// guard before this change polled and tripped under g.mu, one step. The interleaving is
// reproduced here step by step: A's poll is the very poll quiet() makes, then B asks.
// Correct: once a mount came or went, no quiet() that returns after it may return true (a
// change seen must trip the guard before any other worker can ask, e.g. poll and store
// under a lock, or never let a poll consume the change: compare a mount count read after).
func TestAttackMountChangeSeenByOneWorkerOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	g, root := guarded(t)
	a := filepath.Join(root, "a")
	if err := unix.Mount("none", a, "tmpfs", 0, "size=64k"); err != nil {
		t.Skip(err)
	}
	defer unix.Unmount(a, unix.MNT_DETACH)
	// Worker A: quiet()'s poll, returned, its store of tripped not made yet.
	n, err := unix.Poll([]unix.PollFd{g.poll[0], g.poll[1]}, 0)
	if err != nil || n == 0 {
		t.Fatalf("worker A's poll did not see the mount: %d %v", n, err)
	}
	// Worker B asks now.
	if g.quiet() {
		t.Error("a mount came, and a worker asking while another is told of it finds the guard quiet: its file goes into the covered folder unchecked")
	}
}

// TestAttackMountChangeRaceQuiet: the race of TestAttackMountChangeSeenByOneWorkerOnly with
// real goroutines, no step by step: workers ask quiet() in a loop (as a restore's --jobs
// do, twice per file) while a mount comes; a quiet() begun after the mount returned true
// means a worker went on with the checks skipped although a folder may now be covered.
// Correct: never, in any of the rounds.
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
	for round := 0; round < 1500 && hits == 0; round++ {
		g := newMoveGuard(rfd)
		if g.tripped.Load() {
			t.Skipf("no move guard on %s", root)
		}
		var mounted, stop, bad atomic.Bool
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					after := mounted.Load()
					if g.quiet() && after {
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
			t.Errorf("round %d: a quiet() begun after a mount came returned true", round)
		}
	}
}
