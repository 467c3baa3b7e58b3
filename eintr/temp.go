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
	var f *os.File
	err := makeTemp(dir, pattern, "createtemp", func(name string) error {
		fd, err := Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err == nil {
			f = os.NewFile(uintptr(fd), name)
		}
		return err
	})
	return f, err
}

// MkdirTemp is os.MkdirTemp, its mkdir made with Mkdirat: one cut short by a signal that
// made the folder made it, where os.MkdirTemp would leave it behind.
func MkdirTemp(dir, pattern string) (string, error) {
	var made string
	err := makeTemp(dir, pattern, "mkdirtemp", func(name string) error {
		err := Mkdirat(unix.AT_FDCWD, name, 0o700)
		if err == nil {
			made = name
		}
		return err
	})
	return made, err
}

// makeTemp calls create with new names of pattern (its last * a random number) in dir (the
// temp folder when empty) until one is free.
func makeTemp(dir, pattern, op string, create func(name string) error) error {
	if dir == "" {
		dir = os.TempDir()
	}
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	if strings.ContainsRune(pattern, '/') {
		return &fs.PathError{Op: op, Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		err := create(dir + prefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + suffix)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EEXIST) && try < 10000:
			continue
		}
		return &fs.PathError{Op: op, Path: dir + prefix + "*" + suffix, Err: err}
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
