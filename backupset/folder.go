package backupset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"backup/atomicfile"
	"backup/eintr"
)

// Folder is a set in a local folder. Its conditional writes are checked and then done, which
// is atomic only because every writer of a set holds its flock (Lock) while it writes.
type Folder struct {
	Dir string
}

// Location returns the folder's path.
func (f Folder) Location() string { return f.Dir }

// path is name in the folder, Dir not cleaned: a DIR the kernel cannot reach (missing/../set)
// must not become another folder (set) for one file and stay itself for the listing.
func (f Folder) path(name string) string {
	return strings.TrimSuffix(f.Dir, string(filepath.Separator)) + string(filepath.Separator) + name
}

// folderETag stands for a file's content by its inode, size and modification time: the set's
// files are replaced by rename, never rewritten in place, so a replaced file is a new inode
// even when the clock has not ticked (the temp file exists beside the one it replaces).
func folderETag(info fs.FileInfo) string {
	var ino uint64
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%x-%x-%x", ino, info.Size(), info.ModTime().UnixNano())
}

func folderObject(info fs.FileInfo) Object {
	o := Object{Name: info.Name(), Size: info.Size(), ETag: folderETag(info)}
	if !info.Mode().IsRegular() {
		o.NotRegular = atomicfile.DescribeType(info.Mode())
	}
	return o
}

// List lists the folder; a missing folder is an empty set.
func (f Folder) List(context.Context) ([]Object, error) {
	entries, err := os.ReadDir(f.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	objs := make([]Object, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, folderObject(info))
	}
	return objs, nil
}

// Stat describes the file at name, without following a symlink.
func (f Folder) Stat(_ context.Context, name string) (Object, error) {
	info, err := os.Lstat(f.path(name))
	if err != nil {
		return Object{}, err
	}
	return folderObject(info), nil
}

// ReadFile reads a regular file, refusing a symlink, a FIFO or a device (see
// atomicfile.ReadRegular).
func (f Folder) ReadFile(_ context.Context, name string, limit int64) ([]byte, string, error) {
	path := f.path(name)
	data, err := atomicfile.ReadRegular(path, limit)
	if err != nil {
		return nil, "", err
	}
	info, err := os.Lstat(path)
	if err != nil {
		return nil, "", err
	}
	return data, folderETag(info), nil
}

// Open opens a regular file for reading, without blocking on a FIFO.
func (f Folder) Open(_ context.Context, name string) (File, error) {
	path := f.path(name)
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := file.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: errors.New("is " + atomicfile.DescribeType(info.Mode()))}
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return &folderFile{File: file, size: info.Size()}, nil
}

type folderFile struct {
	*os.File
	size int64
}

func (f *folderFile) Size() int64 { return f.size }

// Put writes the file atomically (temp file, fsync, rename, folder fsync), after checking
// its condition. The new ETag is the temp file's, taken before the rename (which keeps its
// inode, size and mtime): once the rename is made no failure may say the file was not
// written.
func (f Folder) Put(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	path := f.path(name)
	if err := f.check(ctx, name, ifMatch); err != nil {
		return "", err
	}
	s, err := atomicfile.Stage(path, data, 0o644)
	if err != nil {
		return "", err
	}
	info, err := os.Lstat(s.Temp)
	if err != nil {
		s.Discard()
		return "", err
	}
	if err := atomicfile.Publish(s); err != nil {
		return "", err
	}
	return folderETag(info), nil
}

// check says whether the file at name is as ifMatch expects: absent for "", else with that
// ETag.
func (f Folder) check(ctx context.Context, name, ifMatch string) error {
	o, err := f.Stat(ctx, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && ifMatch == "":
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return &fs.PathError{Op: "replace", Path: f.path(name), Err: ErrChanged}
	case err != nil:
		return err
	case ifMatch == "":
		return &fs.PathError{Op: "create", Path: f.path(name), Err: ErrExists}
	case o.ETag != ifMatch:
		return &fs.PathError{Op: "replace", Path: f.path(name), Err: ErrChanged}
	}
	return nil
}

// Delete removes the file when it still has the ETag ifMatch.
func (f Folder) Delete(ctx context.Context, name, ifMatch string) error {
	if _, err := f.Stat(ctx, name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := f.check(ctx, name, ifMatch); err != nil {
		return err
	}
	err := eintr.Remove(f.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
