//go:build unix

package skiprules

import (
	"io/fs"
	"os"
	"syscall"
)

// deviceOf returns the device id from a unix stat result.
func deviceOf(info fs.FileInfo) uint64 {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	// Dev is uint64 on Linux but a narrower signed type on some systems.
	return uint64(st.Dev)
}

// openNoFollow opens name for reading without following a final symlink and
// without blocking on a FIFO.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
