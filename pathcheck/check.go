package pathcheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Arg is a path a command reads or writes, with how the user named it for messages.
type Arg struct {
	What string // how the messages name it: "--receipt r.json", "SOURCE app"
	Path string // as given; "" when only Info names it
	// Info is the file itself when the command holds it open rather than by name (stdout's
	// file); the path, when there is one, then is where it was found.
	Info fs.FileInfo
	// Kind, for an output file, is what it writes: inside a SOURCE folder it may replace
	// only a file of that kind (one a run wrote before). nil: not checked against SOURCE
	// folders (stdout's file, which the shell opened and emptied already; folders).
	Kind *Kind
	// File says the output names a file: an existing folder, FIFO, device or socket at its
	// path is refused.
	File bool
	// Folder says the output is a folder the command writes files into while it reads its
	// inputs (a cache): no input may be inside it.
	Folder bool
}

// Kind is what an output file holds: a file of this kind at its path was written by
// a run before, and the next may replace it.
type Kind struct {
	Name string                 // for messages: "a receipt"
	Is   func(path string) bool // whether the file at path is one
}

// Check is the one check every command's outputs pass before anything is written, and
// every output flag a command has, or gains, joins: an output is never an input, never
// holds one (an output folder), never another output, never in a folder that holds only its owner's files, and never replaces a
// user's file inside a SOURCE. "Is" means the same file once every symlink on the way is
// resolved (a symlink, a symlinked folder, a/../b), or the same device and inode (a hard
// link). Once, --metrics-file a.zip replaced the archive it described with Prometheus text,
// and the run said complete.
type Check struct {
	Inputs  []Arg // files and folders the command reads
	Sources []Arg // folders whose files the run reads (a SOURCE)
	Sealed  []Arg // folders that hold only their owner's files (a backup set, DEST)
	Outputs []Arg // files and folders the command writes
}

// Err returns the first rule an output breaks, as one line naming it and what it collides
// with, or nil.
func (pc Check) Err() error {
	mounts := &mountTable{}
	for i, out := range pc.Outputs {
		if err := out.fileOutput(); err != nil {
			return err
		}
		for _, other := range append(pc.Inputs[:len(pc.Inputs):len(pc.Inputs)], pc.Outputs[:i]...) {
			if sameFile(out, other, mounts) {
				return fmt.Errorf("%s is also %s", out.What, other.What)
			}
		}
		for _, in := range pc.Inputs {
			if out.Folder && inside(in, out, mounts) {
				return fmt.Errorf("%s is inside %s", in.What, out.What)
			}
		}
		for _, folder := range pc.Sealed {
			if sameFile(out, folder, mounts) {
				return fmt.Errorf("%s is %s", out.What, folder.What)
			}
			if inside(out, folder, mounts) {
				return fmt.Errorf("%s is inside %s", out.What, folder.What)
			}
		}
		if err := out.replacesInput(pc.Sources, mounts); err != nil {
			return err
		}
	}
	return nil
}

// fileOutput refuses an output file whose path holds a folder, or a FIFO, a device or a
// socket: the rename that puts the file in place would replace it (as root, --receipt
// /dev/null once replaced /dev/null with a regular file). A symlink there is replaced, not
// followed, so it is fine, unless it leads to such a file, or through /proc (/dev/stdout,
// /proc/self/fd/1): such a link names a device or a descriptor, not a place for a file,
// and replacing it (as root, --metrics-file /dev/stdout) broke the system's /dev/stdout.
func (out Arg) fileOutput() error {
	if !out.File || out.Path == "" {
		return nil
	}
	if inProc(out.Path) {
		return fmt.Errorf("%s is in /proc, which holds descriptors, not files: give another path", out.What)
	}
	target, err := os.Stat(out.Path)
	if err == nil && target.IsDir() {
		return fmt.Errorf("%s is a folder", out.What)
	}
	info, lerr := os.Lstat(out.Path)
	if lerr != nil {
		return nil
	}
	if kind := specialKind(info.Mode()); kind != "" {
		return fmt.Errorf("%s is %s, not a regular file: give another path", out.What, kind)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if err == nil && specialKind(target.Mode()) != "" {
		return fmt.Errorf("%s is a symlink to %s, which the output would replace: give another path", out.What, specialKind(target.Mode()))
	}
	if via := throughProc(out.Path); via != "" {
		return fmt.Errorf("%s is a symlink to %s, which the output would replace: give another path", out.What, via)
	}
	return nil
}

// inProc says whether path's folder is in /proc, its own links followed (/proc/self/fd/1,
// /dev/fd/1): no file can be made there.
func inProc(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	return err == nil && (dir == "/proc" || strings.HasPrefix(dir, "/proc/"))
}

// throughProc returns the first target, on the chain of symlinks at path, that is in /proc
// (a descriptor, not a file's place); "" when there is none.
func throughProc(path string) string {
	for range maxLinks {
		target, err := os.Readlink(path)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		if target == "/proc" || strings.HasPrefix(target, "/proc/") {
			return target
		}
		path = target
	}
	return ""
}

// specialKind names a FIFO, a device or a socket; "" for anything else.
func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return ""
}

// replacesInput refuses an output that would replace a file inside a SOURCE folder, which the
// run backs up (and, as its own output, would leave out), unless that file is one this
// output wrote before.
func (out Arg) replacesInput(sources []Arg, mounts *mountTable) error {
	if out.Kind == nil || out.Path == "" {
		return nil
	}
	at := resolveDir(out.Path) // the name a rename replaces: a symlink there, not its target
	info, err := os.Lstat(at)
	if err != nil {
		return nil
	}
	// Kind.Is reads the file (an archive's manifest: a tenth of a second at 30,000 files),
	// so it is asked only of a file inside a SOURCE, the one case where its answer counts.
	for _, src := range sources {
		if !insideResolved(at, src, mounts) {
			continue
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			// A run writes its outputs by rename, never a link: this one is the user's.
			return fmt.Errorf("%s is a symlink inside %s, which the output would replace: give another path", out.What, src.What)
		}
		if !out.Kind.Is(at) {
			return fmt.Errorf("%s is a file inside %s that is not %s", out.What, src.What, out.Kind.Name)
		}
	}
	return nil
}

// sameFile reports whether a and b are one file: the same resolved path, the same place in
// one file system (a name not made yet, reached through a bind mount of its folder), or the
// same device and inode.
func sameFile(a, b Arg, mounts *mountTable) bool {
	if a.Path != "" && b.Path != "" {
		ra, rb := resolvePath(a.Path), resolvePath(b.Path)
		if ra == rb || mounts.samePlace(ra, rb) {
			return true
		}
	}
	ia, ib := a.stat(), b.stat()
	return ia != nil && ib != nil && os.SameFile(ia, ib)
}

// inside reports whether p is below the folder dir: one of the folders above p, resolved, is
// dir by path or by device and inode (a bind mount, a second name of a folder), or p lies
// below dir in their file system (p reached through a bind mount of a folder inside dir, or
// is one).
func inside(p, dir Arg, mounts *mountTable) bool {
	if p.Path == "" && p.Info != nil && dir.Path != "" {
		return holds(dir.Path, p.Info)
	}
	if p.Path == "" {
		return false
	}
	return insideResolved(resolvePath(p.Path), dir, mounts)
}

// insideResolved is inside for the absolute path p, its folders resolved: a symlink at its
// end is the name placed, not its target.
func insideResolved(p string, dir Arg, mounts *mountTable) bool {
	if dir.Path == "" {
		return false
	}
	root := resolvePath(dir.Path)
	rootInfo := dir.stat()
	if rootInfo != nil && mounts.insideByMounts(p, root) {
		return true
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if d == root {
			return true
		}
		if rootInfo != nil {
			if info, err := os.Stat(d); err == nil && os.SameFile(info, rootInfo) {
				return true
			}
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// holds reports whether the file info is (by device and inode) one of the files directly in
// the folder dir: an output known only as an open file (stdout's, which the shell opened)
// has no path to walk up from. One level is enough for what Sealed holds (a set's files).
func holds(dir string, info fs.FileInfo) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(fi, info) {
			return true
		}
	}
	return false
}

func (p Arg) stat() fs.FileInfo {
	if p.Info != nil {
		return p.Info
	}
	info, err := os.Stat(p.Path)
	if err != nil {
		return nil
	}
	return info
}
