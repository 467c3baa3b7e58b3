package backupset

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// procLocks is the kernel's list of the locks held; a variable for tests.
var procLocks = "/proc/locks"

// lockHolder returns the pid of the process holding the flock on the open lock file f, for
// the message a run that finds the set locked prints. The file's own words are not enough:
// a holder that is not a backup run (an operator's `flock DIR/.backup.lock rsync …`), or
// one that does not write its pid (a lock file with other names), leaves there the pid of
// a run killed long ago, which may since name an unrelated process that an operator would
// then kill. So the kernel's list is asked first; the file is read only where that list
// cannot be read at all. 0 means the holder is not known (it released the lock meanwhile,
// or lives in another pid namespace, which the list shows as 0): the message names none.
func lockHolder(f *os.File) int {
	if pid, ok := kernelHolder(f); ok {
		return pid
	}
	return awaitPid(f)
}

// kernelHolder looks f's inode up in /proc/locks and returns the pid of its FLOCK holder
// (0 when none is listed); ok is false when the list or f cannot be read.
func kernelHolder(f *os.File) (pid int, ok bool) {
	var st unix.Stat_t
	if eintr.Fstat(int(f.Fd()), &st) != nil {
		return 0, false
	}
	list, err := os.Open(procLocks)
	if err != nil {
		return 0, false
	}
	defer list.Close()
	// The kernel prints the device as "%02x:%02x" and the inode in decimal.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	lines := bufio.NewScanner(list)
	for lines.Scan() {
		if pid, found := flockLine(lines.Text(), id); found {
			return pid, true
		}
	}
	return 0, lines.Err() == nil
}

// flockLine parses one line of /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:131 0
// EOF") and returns its pid when it is a held (not a waiting, "->") lock on the inode id: a
// flock, or the POSIX lock NFS makes of one.
func flockLine(line, id string) (int, bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 || (fields[1] != "FLOCK" && fields[1] != "POSIX") || fields[5] != id {
		return 0, false
	}
	pid, err := strconv.Atoi(fields[4])
	if err != nil || pid < 0 {
		return 0, true
	}
	return pid, true
}
