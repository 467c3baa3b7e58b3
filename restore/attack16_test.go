package restore

import (
	"os"
	"path/filepath"
	"testing"

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
