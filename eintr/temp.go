package eintr

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CreateTemp is os.CreateTemp, its create made with Openat: one cut short by a signal that
// made the file is made again, where os.CreateTemp would take the name for someone else's
// and leave the empty file behind. As there, dir is not cleaned: lnk/.. is the folder
// above lnk's target, not the one lnk is in.
func CreateTemp(dir, pattern string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := dir + prefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + suffix
		fd, err := Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EEXIST) && try < 10000:
			continue
		}
		return nil, &fs.PathError{Op: "createtemp", Path: dir + prefix + "*" + suffix, Err: err}
	}
}

// Remove removes the file (not a folder) path, as os.Remove does, its error a
// *fs.PathError; a removal cut short whose repeat finds the name gone removed it.
func Remove(path string) error {
	if err := Unlink(path); err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}
