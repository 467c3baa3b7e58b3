package walker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
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
	// *fs.PathError: Op OpOpen when the directory was no longer the one its stat saw (swapped
	// for a symlink or another directory: nothing in it is read), OpReadDir otherwise. A
	// non-nil return stops the walk.
	ReadDirFailed func(dir Entry, err error) error
	// NoFollowRoot walks a root that is a symlink as the symlink (the folders above it are
	// still followed): for a root the user did not name, such as a path in a restore's
	// destination saved in its before-state, which must not be read through a link.
	NoFollowRoot bool

	// lstat stats an entry in an open directory; nil means lstatAt. Tests inject failures,
	// and swaps of the tree, here.
	lstat func(dirfd int, name string) (fs.FileInfo, error)
	// readdirnames lists an open directory, n names at a time; nil means
	// (*os.File).Readdirnames. Tests list a name twice here, as the kernel may for a
	// directory changed while it is listed.
	readdirnames func(f *os.File, n int) ([]string, error)
}

// Walk walks the tree at root, naming the root name in stored names. A root that is a
// symlink is followed (the user named it), unless NoFollowRoot. It returns an error when
// the root cannot be stat'ed, when ctx is done, or when a hook stops the walk.
func (w Walker) Walk(ctx context.Context, root, name string) error {
	parent, base, err := openRoot(root, !w.NoFollowRoot)
	if err != nil {
		return err
	}
	defer parent.release()
	info, err := lstatAt(parent.fd, base)
	if err != nil {
		return &fs.PathError{Op: "lstat", Path: root, Err: err}
	}
	e := Entry{Name: name, Info: info, RootDev: deviceOf(info), parent: parent, base: base}
	return w.visit(ctx, e)
}

func (w Walker) visit(ctx context.Context, e Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.IsDir() {
		e.self = &subdir{}
		defer e.self.close()
	}
	err := w.Visit(e)
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	if err != nil || !e.IsDir() {
		return err
	}
	return w.walkDir(ctx, e)
}

// walkDir visits what is in the directory e, opened relative to the directory above it.
func (w Walker) walkDir(ctx context.Context, e Entry) error {
	d, err := e.self.open(e.parent, e.base, e.Info)
	if err != nil {
		return w.readDirFailed(e, err)
	}
	names, err := d.readNames(w.readdirnames)
	if err != nil {
		if err := w.readDirFailed(e, err); err != nil {
			return err
		}
	}
	kids := e.childNames()
	for len(names) > 0 {
		n := min(len(names), aheadMost)
		if err := w.visitNames(ctx, e, d, kids, names[:n]); err != nil {
			return err
		}
		names = names[n:]
	}
	return nil
}

// visitNames stats and visits names, which are in the directory d of e.
func (w Walker) visitNames(ctx context.Context, e Entry, d *dir, kids childNames, names []string) error {
	ahead := w.statAhead(d, names, kids.stored)
	defer ahead.end()
	for i, n := range names {
		c := kids.child(e, d, n)
		if ahead.take(i) {
			c.Info, c.Err = w.stat(d, n, c.Name)
		} else {
			c.Info, c.Err = ahead.result(i)
		}
		if err := w.visit(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (w Walker) readDirFailed(e Entry, err error) error {
	if w.ReadDirFailed == nil {
		return nil
	}
	op := OpReadDir
	if errors.Is(err, errReplaced) {
		op = OpOpen
	}
	return w.ReadDirFailed(e, &fs.PathError{Op: op, Path: e.Name, Err: unwrapPathError(err)})
}

// stat returns lstat's answer, or when lstat failed for a reason other than the path having
// vanished, fstat's answer on the path opened without following links or blocking.
func (w Walker) stat(d *dir, name, stored string) (fs.FileInfo, error) {
	lstat := w.lstat
	if lstat == nil {
		lstat = lstatAt
	}
	info, err := lstat(d.fd, name)
	if err == nil {
		return info, nil
	}
	statErr := &fs.PathError{Op: OpStat, Path: stored, Err: unwrapPathError(err)}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, statErr
	}
	f, openErr := d.openFile(name)
	if errors.Is(openErr, unix.ELOOP) {
		// A symlink, which the open never follows: the lstat's error is what lost it.
		return nil, &fs.PathError{Op: OpOpen, Path: stored, Err: fmt.Errorf("lstat failed: %w", statErr.Err)}
	}
	if openErr != nil {
		return nil, &fs.PathError{Op: OpOpen, Path: stored, Err: unwrapPathError(openErr)}
	}
	defer f.Close()
	info, fstatErr := f.Stat()
	if fstatErr != nil {
		return nil, &fs.PathError{Op: OpStat, Path: stored, Err: unwrapPathError(fstatErr)}
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
