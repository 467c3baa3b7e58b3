package backupset

import (
	"context"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// The checks of a folder that must be no set's (an attic, an undo folder, another run's
// output, a folder a restore writes into) take it for a set's when it holds the lock file,
// which every run into a folder set creates first and leaves, or a LATEST that names a run
// (a set copied without its lock). A file merely called LATEST is a user's: release trees
// hold one, and a restore of such a tree over its last copy was refused.

// Marker names the file that makes the folder a set's, or "", also for a folder that cannot
// be opened: what is to be written there fails where it is written. Two lookups, as
// MarkerAt makes them, not a listing of what may be a large folder.
func (f Folder) Marker(context.Context) string {
	dfd, err := eintr.Open(f.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(dfd)
	return MarkerAt(dfd)
}

// MarkerAt is Marker for the folder open as dfd: a restore asks it of every folder of DEST it
// passes through.
func MarkerAt(dfd int) string {
	var st unix.Stat_t
	if eintr.Fstatat(dfd, LockName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		return LockName
	}
	fd, err := eintr.Openat(dfd, LatestName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	file := os.NewFile(uintptr(fd), LatestName)
	defer file.Close()
	if info, err := file.Stat(); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	data, err := io.ReadAll(io.LimitReader(file, maxPointer+1))
	if err != nil || len(data) > maxPointer || !isPointer(data) {
		return ""
	}
	return LatestName
}

func isPointer(data []byte) bool {
	_, err := parsePointer(data)
	return err == nil
}

// UsersLatest says whether the folder whose listing is files (a set FindSets found by its
// LATEST) holds a user's file named LATEST rather than a set's pointer, as Marker judges it:
// no lock file and no run's archive or receipt beside it, and a LATEST that names no run (or
// is no regular file: a release folder's LATEST -> v2). backup sets listed such a folder (a
// test restore below the fleet's location) as a damaged set for ever. A LATEST that cannot
// be read is not judged: the set is listed, with the error.
func UsersLatest(ctx context.Context, st Store, files []Object) bool {
	var latest *Object
	for i, f := range files {
		switch {
		case f.Name == LockName || isRunFile(f.Name):
			return false
		case f.Name == LatestName:
			latest = &files[i]
		}
	}
	if latest == nil {
		return false
	}
	if latest.NotRegular != "" || latest.Size > maxPointer {
		return true
	}
	data, _, err := st.ReadFile(ctx, LatestName, maxPointer)
	return err == nil && !isPointer(data)
}
