package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"backup/eintr"
)

// CreateUnnamed makes a file in dir, open for reading and writing, that only this process
// can reach: a spool. It has no name (O_TMPFILE), so a killed run leaves nothing behind and
// no one can put a file of theirs at its name. A file system without unnamed files (NFS,
// FAT, kernels before 3.11) gets a temp file named by SpoolPrefix and removed at once,
// which only a kill between the two calls leaves, for a set's sweep to find.
func CreateUnnamed(dir string) (*os.File, error) {
	fd, err := eintr.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(spool)"), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	f, err := eintr.CreateTemp(dir, SpoolPrefix+"*")
	if err != nil {
		return nil, err
	}
	if err := eintr.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
