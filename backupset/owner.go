package backupset

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Owner names the process that holds a lock that outlives it (an S3 set's lock object), so
// that a run on the same host can tell at once whether that process is still alive, as
// restic does, instead of waiting for the lease to run out. A pid alone cannot say it: a pid
// is reused, and the same pid on another boot or in another pid namespace is another
// process. So the owner is named by host, boot, pid namespace, pid and the process's start
// time; only a run that shares the first three can look the last two up.
type Owner struct {
	Host string `json:"host"`
	Pid  int    `json:"pid"`
	// BootID is the kernel's boot_id; PidNS the pid namespace ("pid:[4026531836]").
	BootID string `json:"boot_id,omitempty"`
	PidNS  string `json:"pid_ns,omitempty"`
	// ProcStart is when the process started, in clock ticks since boot (field 22 of
	// /proc/PID/stat): a pid reused by another process has another.
	ProcStart uint64 `json:"proc_start,omitempty"`
}

var (
	selfOnce sync.Once
	self     Owner
)

// ThisProcess returns the running process as an Owner. What cannot be read stays empty,
// and an owner with an empty field is never judged gone (see Gone).
func ThisProcess() Owner {
	selfOnce.Do(func() {
		self.Host, _ = os.Hostname()
		self.Pid = os.Getpid()
		if data, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			self.BootID = strings.TrimSpace(string(data))
		}
		self.PidNS, _ = os.Readlink("/proc/self/ns/pid")
		self.ProcStart, _, _ = procStat(self.Pid)
	})
	return self
}

// Gone reports whether the owner is certainly dead: it ran on this host, in this boot and
// in this pid namespace, and its pid is now no process, a zombie, or a process that started
// at another time (the pid was reused). Anything it cannot tell (another host, a lock written
// before owners were named this way) is not gone: the lease decides then.
func (o Owner) Gone() bool {
	me := ThisProcess()
	if o.Host == "" || o.BootID == "" || o.PidNS == "" || o.Pid <= 0 || o.ProcStart == 0 ||
		o.Host != me.Host || o.BootID != me.BootID || o.PidNS != me.PidNS {
		return false
	}
	start, state, err := procStat(o.Pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil:
		return false
	}
	return start != o.ProcStart || state == 'Z' || state == 'X'
}

// procStat reads the start time (in clock ticks since boot) and the state of process pid
// from /proc/PID/stat.
func procStat(pid int) (start uint64, state byte, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the fields are
	// counted from the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("unreadable /proc stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	const startField = 22 - 3 // fields are numbered from 1, and the first after ')' is the 3rd
	if len(fields) <= startField || len(fields[0]) != 1 {
		return 0, 0, errors.New("unreadable /proc stat")
	}
	start, err = strconv.ParseUint(fields[startField], 10, 64)
	return start, fields[0][0], err
}

// Takeover says whose lock a run took over: a lock object whose holder was gone, as a run
// killed with kill -9 leaves it.
type Takeover struct {
	// Owner is the holder the lock object named; the zero Owner when it named none (a
	// damaged lock object).
	Owner Owner
	// Expired says the holder's lease had run out; otherwise it was seen dead on this host
	// (see Owner.Gone).
	Expired bool
}

// takenOver is a Held that may have been taken over from a gone holder.
type takenOver interface{ TookOver() *Takeover }

// TookOver says whose lock this one took over; nil when it took a free lock (and always for
// a folder's flock, which the kernel frees when its holder dies).
func (l *Lock) TookOver() *Takeover {
	if t, ok := l.held.(takenOver); ok {
		return t.TookOver()
	}
	return nil
}
