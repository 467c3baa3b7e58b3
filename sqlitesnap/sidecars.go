package sqlitesnap

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"backup/eintr"
)

// SQLite opens a database's -journal, -wal and -shm by name, without O_NONBLOCK: a FIFO at
// one of those names (the -journal, which it opens read-only to see whether it is hot)
// blocks it for ever, and neither --sqlite-timeout nor Ctrl-C can stop a blocked open. So a
// database whose sidecars are not all regular files (or absent) is not handed to SQLite at
// all; and, should one be swapped for a FIFO after that check, a watch opens each FIFO it
// finds at those names for writing, which lets a blocked open return (SQLite then reads
// nothing from it), and the copy fails.

// checkSidecars checks that each sidecar of src is a regular file or absent.
func checkSidecars(src Source) error {
	for _, suffix := range sidecarSuffixes {
		info, err := os.Lstat(src.path() + suffix)
		switch {
		case noSidecar(err):
		case err != nil:
			return fmt.Errorf("its %s: %w", suffix, pathCause(err))
		case !info.Mode().IsRegular():
			return fmt.Errorf("its %s is %s, not a regular file, which SQLite would open", suffix, describe(info.Mode()))
		}
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// fifoWatchEvery is how often the watch looks for a FIFO at a sidecar's name.
const fifoWatchEvery = 200 * time.Millisecond

// watchFIFOs watches src's sidecars while SQLite copies it; stop ends the watch and reports
// whether it found a FIFO there.
func watchFIFOs(src Source) (stop func() bool) {
	done := make(chan struct{})
	var found bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(fifoWatchEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if unblockFIFOs(src) {
					found = true
				}
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return found || unblockFIFOs(src)
	}
}

// unblockFIFOs opens, for writing and at once closes, each FIFO at a sidecar's name of src:
// an open for reading blocked on it returns. It reports whether it found one.
func unblockFIFOs(src Source) bool {
	found := false
	for _, suffix := range sidecarSuffixes {
		name := src.path() + suffix
		if info, err := os.Lstat(name); err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
			continue
		}
		found = true
		// ENXIO when no reader waits: then there is nothing to unblock.
		if fd, err := eintr.Open(name, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0); err == nil {
			syscall.Close(fd)
		}
	}
	return found
}
