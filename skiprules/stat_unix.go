//go:build unix

package skiprules

import (
	"io/fs"
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

// sameFile reports whether a and b describe the same file. It compares device
// and inode rather than using os.SameFile, which knows only the os package's
// own stat results, not the walker's fstatat ones.
func sameFile(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
