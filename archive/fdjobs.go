package archive

import "golang.org/x/sys/unix"

// fdsPerJob is what one worker may hold open at once: the file it reads, and its spool or
// the SQLite snapshot it reads from.
const fdsPerJob = 2

// roomyLimit is a limit on open files past which no cap is needed: 128 jobs (the most
// --jobs takes) hold 256.
const roomyLimit = 4096

// fdJobs caps jobs so that the workers' files fit in half the descriptors still free (the
// other half is the walk's, whose folders stay open down the tree): without the cap, create
// --jobs 8 under ulimit -n 16 lost files of a flat folder ("too many open files") that
// --jobs 1 read whole. Never fewer than one.
func fdJobs(jobs int) int {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil || lim.Cur > roomyLimit {
		return jobs
	}
	return max(1, min(jobs, freeFDs(int(lim.Cur))/2/fdsPerJob))
}

// freeFDs counts the descriptors below limit not open now.
func freeFDs(limit int) int {
	free := 0
	for fd := range limit {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == unix.EBADF {
			free++
		}
	}
	return free
}
