package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAttackLockNamesForgedPid: the set's lock is held by a process that is not a backup run
// (an operator's `flock DIR/.backup.lock rsync …`, here the test itself), and the lock file
// holds the pid of a process that died long ago, since recycled: pid 1 here, alive and
// unrelated. A run found the set locked and said `another backup of this set is running,
// pid 1`, taking the file's words for who holds the lock: an operator who kills the pid
// named kills an unrelated process, and the holder runs on. The kernel knows who holds a
// flock (/proc/locks); the message names that process, or none when it cannot tell.
func TestAttackLockNamesForgedPid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	lock := filepath.Join(set, ".backup.lock")
	if err := os.WriteFile(lock, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	release := heldFlock(t, lock)
	defer release()
	want := "another backup of this set is running, pid " + strconv.Itoa(os.Getpid()) + "\n"
	for _, args := range [][]string{
		{"create", "-q", "--output-dir", set, "app"},
		{"prune", "--keep-last", "1", set},
		{"activate", set, "LATEST"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitLocked || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s on a set another process locks: exit %d, stderr %q; want %d and …%q", args[0], r.code, r.stderr, exitLocked, want)
		}
	}
}
