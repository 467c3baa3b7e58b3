package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadRegular reads the regular file at path, of at most limit bytes. It refuses a symlink
// in the last component and any file that is not regular, and it never blocks: a FIFO put
// where a receipt should be is opened non-blocking and refused after fstat, so a command
// reading it cannot hang. Errors are *fs.PathError values naming path.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symlink")}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("is %s", DescribeType(info.Mode()))}
	}
	// Refused by its size first: a sparse file planted larger than the limit costs no disk,
	// but reading it to the limit would cost that much memory and time.
	if info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}

// DescribeType names a file type for messages: "a symlink", "a directory"…
func DescribeType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}
