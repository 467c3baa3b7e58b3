package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// TestAttackRootRunGivesAwayPlantedFile: the set's folder is a service user's (nobody,
// 0755), backed up by root's timer. That user moved a file of root's (0600, "root's
// secret", left in a folder the user may write) to the set as .backup.lock. Root's run gave
// the lock file to the folder's owner, as it does its own lock file so as never to lock the
// owner out: the user then owned root's file and read it. A lock file holds a pid or
// nothing; a file that holds anything else is locked as it is, and not given away (nor its
// mode changed).
func TestAttackRootRunGivesAwayPlantedFile(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := sharedTempDir(t)
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(set, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir, uid: nobody}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	lock := filepath.Join(set, ".backup.lock")
	if err := os.WriteFile(lock+".planted", []byte("root's secret, many lines of it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock+".planted", lock); err != nil {
		t.Fatal(err)
	}
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app")
	mustExit(t, r, exitComplete)
	fi, err := os.Stat(lock)
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("root's file planted as the lock file is now uid %d, %v; want root's, 0600 as it was", uid, fi.Mode().Perm())
	}
	// The set's own lock file, empty or holding a pid, is still given to the folder's owner.
	os.Remove(lock)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "app"), exitComplete)
	if fi, err := os.Stat(lock); err != nil || fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Errorf("root's own lock file: %v, %v; want it given to the folder's owner", fi, err)
	}
}
