package backupset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
)

// copyInto copies src to dir/name through a synced temp file beside it, reads the copy back,
// and links it into place only when what landed on disk has the SHA-256 of what was read
// and, unless want is "", want. A file already at name is never replaced: a hard link fails
// where a rename would replace, unless it holds the same bytes (a killed run's copy, which
// counts as done). adopt and prune --attic copy this way. A copy stops when ctx is done,
// before anything is at name. made says whether the file at name is this copy: false when
// one with the same bytes was there already, which is not this run's to take back.
//
// createTemp makes the temp file for name in dir; nil makes it as os.CreateTemp does.
func copyInto(ctx context.Context, dir, name string, src io.Reader, want string, createTemp func(name string) (*os.File, error)) (made bool, err error) {
	if createTemp == nil {
		createTemp = func(name string) (*os.File, error) { return atomicfile.CreateTemp(dir, name) }
	}
	tmp, err := createTemp(name)
	if err != nil {
		return false, err
	}
	defer eintr.Remove(tmp.Name())
	sum, size, err := copySynced(tmp, ctxReader{ctx, src})
	if err != nil {
		return false, err
	}
	back, err := fileSHA256(tmp.Name())
	switch {
	case err != nil:
		return false, err
	case ctx.Err() != nil:
		return false, ctx.Err()
	case back != sum:
		return false, fmt.Errorf("copying %s into %s: the copy reads back differently", name, dir)
	case want != "" && sum != want:
		return false, fmt.Errorf("copying %s into %s: its SHA-256 is %s, its receipt says %s (did it change since it was verified?)", name, dir, sum, want)
	}
	if err := link(tmp, filepath.Join(dir, name)); err != nil {
		if errors.Is(err, fs.ErrExist) && sameContent(filepath.Join(dir, name), size, sum) {
			// A copy a killed run made, which it could not take back: done already.
			return false, nil
		}
		return false, err
	}
	return true, syncDir(dir)
}

// link gives the file tmp (closed) a second name, path, which must be free.
func link(tmp *os.File, path string) error {
	var st unix.Stat_t
	if err := eintr.Lstat(tmp.Name(), &st); err != nil {
		return &os.LinkError{Op: "link", Old: tmp.Name(), New: path, Err: err}
	}
	if err := eintr.Linkat(unix.AT_FDCWD, tmp.Name(), unix.AT_FDCWD, path, 0, eintr.IDOf(&st)); err != nil {
		return &os.LinkError{Op: "link", Old: tmp.Name(), New: path, Err: err}
	}
	return nil
}

// syncDir syncs a folder after a copy was linked into it; tests make it fail.
var syncDir = atomicfile.SyncDir

// sameContent says whether the regular file at path (a symlink or a FIFO is not followed)
// has the size and SHA-256 sum given; the size is checked first, so that a huge file
// planted at the name is not read.
func sameContent(path string, size int64, sum string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() != size {
		return false
	}
	got, err := readerSHA256(f)
	return err == nil && got == sum
}

// copySynced copies src into dst, syncs and closes dst, and returns the SHA-256 of what was
// copied, in hex, and its size.
func copySynced(dst *os.File, src io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readerSHA256(f)
}

func readerSHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
