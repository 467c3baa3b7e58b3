package walker

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Visit is called once for each path, in walk order, on the goroutine that called Walk.
// Returning fs.SkipDir for a directory keeps the walk out of it; any other non-nil error
// stops the walk and is returned by Walk.
type Visit func(Entry) error

// Walker walks one source root.
type Walker struct {
	// Visit sees every path met, the root first, each directory before its contents, names in
	// lexical byte order (like fs.WalkDir), so that archives are deterministic.
	Visit Visit
	// ReadDirFailed is told, after Visit saw the directory, when a directory's names could
	// not be listed in full; the names that were listed are still walked. err is an
	// *fs.PathError with Op OpReadDir. A non-nil return stops the walk.
	ReadDirFailed func(dir Entry, err error) error
	// Lstat stats paths below the root; nil means os.Lstat. Tests inject failures here.
	Lstat func(path string) (fs.FileInfo, error)
}

// Walk walks the tree at root, naming the root name in stored names. A root that is a
// symlink is followed: the user named it. It returns an error when the root cannot be
// stat'ed, when ctx is done, or when a hook stops the walk.
func (w Walker) Walk(ctx context.Context, root, name string) error {
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	// Below the root nothing is opened through a symlink, so resolve the root's own.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	e := Entry{Path: root, Name: name, Info: info, RootDev: deviceOf(info)}
	return w.visit(ctx, e)
}

func (w Walker) visit(ctx context.Context, e Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := w.Visit(e)
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	if err != nil || !e.IsDir() {
		return err
	}
	names, err := readDirNames(e.Path)
	if err != nil && w.ReadDirFailed != nil {
		if err := w.ReadDirFailed(e, &fs.PathError{Op: OpReadDir, Path: e.Name, Err: unwrapPathError(err)}); err != nil {
			return err
		}
	}
	for _, n := range names {
		c := e.child(n)
		c.Info, c.Err = w.stat(c.Path, c.Name)
		if err := w.visit(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(1024)
		names = append(names, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			slices.Sort(names)
			return names, err
		}
	}
	slices.Sort(names)
	return names, nil
}

// stat returns lstat's answer, or when lstat failed for a reason other than the path having
// vanished, fstat's answer on the path opened without following links or blocking.
func (w Walker) stat(p, name string) (fs.FileInfo, error) {
	lstat := w.Lstat
	if lstat == nil {
		lstat = os.Lstat
	}
	info, err := lstat(p)
	if err == nil {
		return info, nil
	}
	statErr := &fs.PathError{Op: OpStat, Path: name, Err: unwrapPathError(err)}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, statErr
	}
	f, openErr := Open(p)
	if openErr != nil {
		return nil, &fs.PathError{Op: OpOpen, Path: name, Err: unwrapPathError(openErr)}
	}
	defer f.Close()
	info, fstatErr := f.Stat()
	if fstatErr != nil {
		return nil, &fs.PathError{Op: OpStat, Path: name, Err: unwrapPathError(fstatErr)}
	}
	return info, statErr
}

// unwrapPathError drops the os package's own PathError, so that the path we report is the
// stored name, given once.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
