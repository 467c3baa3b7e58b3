package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/walker"
)

// RuleRunTemp is the receipt's rule for a file another run is writing: an archive, receipt
// or cached copy under its temp name, which would be stored half-written (see
// atomicfile.CreateTemp).
const RuleRunTemp = "backup-temp"

// isRunTemp reports whether en is a temp file a run holds open to write. One that no run
// holds (a killed run's) is the user's to keep, and stored as any file. So is one that
// someone else could hold: flock needs only an open descriptor, and anyone who can read a
// file could keep it out of every backup. A run's own temp file is its user's, and readable
// by no one else (mode 0600) while it is written.
func isRunTemp(en walker.Entry) bool {
	if en.Rel == "" || !atomicfile.IsTempName(path.Base(en.Rel)) || !onlyOurs(en.Info) {
		return false
	}
	f, err := en.OpenSibling(path.Base(en.Rel))
	if err != nil {
		return false // stored, or warned about, as any file
	}
	defer f.Close()
	return atomicfile.HeldByRun(f) && heldByUser(f)
}

// heldByUser reports whether a process of this process's effective user (this one too: a
// job's temp file in another job's tree) holds the exclusive flock on f. Mode 0600 says who
// may open the file now, not who opened it: a descriptor taken while it was readable by all
// outlives a chmod, and would keep the file out of every backup. The holder is found as
// restore's lock check finds it, by the fdinfo of the descriptors of the locked open file,
// which only its user (or root) can read: when none is found the file is stored.
func heldByUser(f *os.File) bool {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	// The kernel prints the device as "%02x:%02x" and the inode in decimal.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	euid := os.Geteuid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || procEUID(pid) != euid {
			continue
		}
		dir := "/proc/" + p.Name() + "/fdinfo/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or a kernel thread
		}
		for _, fd := range fds {
			if writeFlocks(dir+fd.Name(), id) {
				return true
			}
		}
	}
	return false
}

// writeFlocks reports whether the fdinfo file at path lists an exclusive flock on the inode id.
func writeFlocks(path, id string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "lock:")
		if !ok {
			continue
		}
		// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"
		fields := strings.Fields(rest)
		if len(fields) >= 6 && fields[1] == "FLOCK" && fields[3] == "WRITE" && fields[5] == id {
			return true
		}
	}
	return false
}

// procEUID is the effective uid of process pid, from /proc/PID/status; -1 when unknown.
func procEUID(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) < 2 {
				return -1
			}
			uid, err := strconv.Atoi(fields[1])
			if err != nil {
				return -1
			}
			return uid
		}
	}
	return -1
}

// onlyOurs reports whether info is a file of this process's user that no other user but
// root can open.
func onlyOurs(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && info.Mode().Perm()&0o077 == 0
}
