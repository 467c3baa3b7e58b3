// Command backup archives directory trees into standard zip files and writes a receipt that
// says whether the backup is complete.
package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// version is the tool's version, as receipts record it; release builds set it with -ldflags.
var version = "0.1.0-dev"

func main() {
	if err := startPoller(); err != nil {
		fmt.Fprintf(os.Stderr, "backup: %v; nothing done\n", err)
		os.Exit(exitFailed)
	}
	posixLocal()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// pollerFDs is what the Go runtime's poller takes (an epoll and an eventfd descriptor) and
// the file whose opening sets it up.
const pollerFDs = 3

// startPoller makes the Go runtime set up its poller before any work begins. It does so at
// the first os.Open, and dies when it finds no descriptor free (a stack dump, exit 2, which
// says usage): under a small limit on open files that first os.Open came at the end of a
// run, after the archive and its receipt were renamed into place. A limit that leaves not
// even that much room is an error here, said in one line.
func startPoller() error {
	var probe []int
	defer func() {
		for _, fd := range probe {
			unix.Close(fd)
		}
	}()
	for range pollerFDs {
		fd, err := eintr.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
			return fmt.Errorf("too many open files (the limit, ulimit -n, is %s)", openFileLimit())
		}
		if err != nil {
			return nil // "/" unreadable: the runtime sets its poller up later, as it would
		}
		probe = append(probe, fd)
	}
	for _, fd := range probe {
		unix.Close(fd)
	}
	probe = nil
	if f, err := os.Open("/"); err == nil {
		f.Close()
	}
	return nil
}

// openFileLimit is the soft limit on open files, as a number or "unknown".
func openFileLimit() string {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		return "unknown"
	}
	return fmt.Sprint(lim.Cur)
}
