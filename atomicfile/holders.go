package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FlockHolders returns the other processes that hold a flock on the inode of st: those with
// a descriptor of the locked open file, whose fdinfo lists the lock. A flock belongs to the
// open file, not to the process that took it, and /proc/locks names only that one: flock(1)
// run on a shell's descriptor takes it and exits, and the shell, or any process the
// descriptor was inherited by or passed to, holds it on under a pid /proc/locks does not
// give. None when /proc cannot be read; only root sees every user's processes.
func FlockHolders(st *unix.Stat_t) []int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	// The kernel prints the device as "%02x:%02x" and the inode in decimal.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	self := os.Getpid()
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or a kernel thread
		}
		for _, f := range fds {
			if holdsFlock(filepath.Join(dir, f.Name()), id) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// holdsFlock reports whether the fdinfo file at path lists a flock on the inode id.
func holdsFlock(path, id string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "lock:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) >= 6 && fields[1] == "FLOCK" && fields[5] == id {
			return true
		}
	}
	return false
}

// ProcEUID is the effective uid of process pid, from /proc/PID/status.
func ProcEUID(pid int) (uint32, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) < 2 {
				return 0, false
			}
			uid, err := strconv.ParseUint(fields[1], 10, 32)
			return uint32(uid), err == nil
		}
	}
	return 0, false
}

// ProcDACOverride reports whether the process holds CAP_DAC_OVERRIDE, effective or
// permitted (it may raise it), or its capabilities cannot be read: it may then write
// wherever root may.
func ProcDACOverride(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		key, rest, _ := strings.Cut(line, ":")
		if key != "CapEff" && key != "CapPrm" {
			continue
		}
		caps, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
		if err != nil || caps&(1<<unix.CAP_DAC_OVERRIDE) != 0 {
			return true
		}
		found++
	}
	return found != 2
}
