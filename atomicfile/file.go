// Package atomicfile puts files in place so that each final path holds either its old file
// or a whole, synced new one, and publishes several files (an archive and its receipt) as
// one unit that is rolled back on failure; it reads the small files beside archives
// (receipts, LATEST) without following a symlink or blocking on a FIFO; and it keeps the
// locked journals of temp names that let a run remove what a killed one left in a folder
// that is not its own (journal.go: a restore's DEST, an attic). It is a leaf package
// because the archive, backup sets, receipts and pointers all need it, and none of them
// should import another for it.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"backup/eintr"
)

// Staged is a file written and synced under a temp name beside its final path, waiting for
// Publish to move it there.
type Staged struct {
	// Temp is the synced temp file, in the same folder as Final.
	Temp string
	// Final is where Publish puts the file.
	Final string
	// NoReplace makes Publish fail with an error matching fs.ErrExist when a file exists at
	// Final already; by default it replaces it.
	NoReplace bool
	// Left is set by a Publish that succeeded but could not remove the file this one
	// replaced: that file stays at a temp name, which the error names. Nothing else ever
	// removes it outside a backup set, so the caller must say where it is.
	Left error
}

// DirOf is the folder path's last name is in, as the kernel finds it: path up to its last
// slash, not cleaned ("." for a bare name). filepath.Dir cleans lnk/.. away before lnk is
// followed: a temp file made there, and renamed to path, would cross to another folder, or
// file system, and a check of the folder an output goes into would look at another one.
func DirOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return path[:i]
}

// Stage writes data with mode perm to a synced temp file beside path, named by TempPattern,
// which is how a backup set recognises what a killed run left behind.
func Stage(path string, data []byte, perm fs.FileMode) (_ *Staged, err error) {
	f, err := CreateTemp(DirOf(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			eintr.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &Staged{Temp: f.Name(), Final: path}, nil
}

// Discard removes the staged temp file.
func (s *Staged) Discard() { eintr.Remove(s.Temp) }

// WriteFile writes data to path through a synced temp file in the same folder, so that path
// holds either its old content or all of data, never a part.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	s, err := Stage(path, data, perm)
	if err != nil {
		return err
	}
	return Publish(s)
}

// SyncDir fsyncs a folder, so that a rename or removal in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
