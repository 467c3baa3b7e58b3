package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/backupset"
	"backup/eintr"
	"backup/format"
)

// holdBeforeStates takes a shared flock on dir, the folder a restore writes its before-state
// in, for as long as it writes and publishes it, and returns what lets it go. A restore that
// finds dir held by no one else (an exclusive flock it gets at once) first removes what
// killed restores into dest left there (sweepBeforeStates): a temp file is held by its own
// flock only until it is closed, before its rename, and another restore's shared flock on
// dir covers that gap. Where dir cannot be locked (a file system without flock), nothing is
// swept.
func holdBeforeStates(dir, dest string) (release func()) {
	fd, err := eintr.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() {} // the before-state's writing says what is wrong with dir
	}
	if eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		sweepBeforeStates(dir, dest)
	}
	// From exclusive to shared, or shared beside other restores. Only a sweep holds it
	// exclusively, for milliseconds; a holder for longer is someone else's flock(1), and
	// the restore goes on without the lock rather than hang.
	deadline := time.Now().Add(5 * time.Second)
	for eintr.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == unix.EWOULDBLOCK && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return func() { unix.Close(fd) }
}

// sweepBeforeStates removes from dir what restores into dest killed while they wrote their
// before-state (SIGKILL, the OOM killer) left: the temp files of its archive and receipt,
// ".DEST-before-restore-TIME.zip.tmp-N" and ".….zip.receipt.json.tmp-N", as large as all
// that such a restore replaces, which nothing else ever removes. Only this user's regular
// files so named that no run holds are removed: a run holds a flock on the temp file it
// writes, and the caller holds dir's lock alone (holdBeforeStates), so no restore is between
// the close of one and its rename, when it is held by nothing else.
func sweepBeforeStates(dir, dest string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // the before-state's writing says what is wrong with dir
	}
	series := beforeStateName(dest)
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !atomicfile.IsTempName(name) {
			continue
		}
		base := strings.TrimSuffix(name[1:strings.LastIndex(name, atomicfile.TempInfix)], format.ReceiptSuffix)
		if backupset.SourceOf(base) == series {
			removeDeadTemp(filepath.Join(dir, name))
		}
	}
}

// removeDeadTemp removes the file at path if it is a regular file of this user's that no
// one holds a flock on, and still at path once locked.
func removeDeadTemp(path string) {
	fd, err := eintr.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var held, there unix.Stat_t
	if eintr.Fstat(fd, &held) != nil || held.Mode&unix.S_IFMT != unix.S_IFREG || int(held.Uid) != os.Geteuid() {
		return
	}
	if eintr.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a run is writing it
	}
	if eintr.Lstat(path, &there) == nil && there.Dev == held.Dev && there.Ino == held.Ino {
		eintr.Remove(path)
	}
}
