//go:build !unix

package skiprules

import (
	"io/fs"
	"os"
)

// deviceOf returns 0: without a unix stat result there is no device id, so
// every path looks like it is on the root's file system.
func deviceOf(fs.FileInfo) uint64 { return 0 }

// openNoFollow opens name for reading. Without O_NOFOLLOW the caller's
// lstat-then-SameFile check is what keeps a swapped-in link out.
func openNoFollow(name string) (*os.File, error) { return os.Open(name) }
