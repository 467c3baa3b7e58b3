package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// refuseEmpty refuses the empty string as the value of the path-valued flags given and of
// the arguments, named by argNames in order (the last name also names any further
// arguments): an unset variable in a script (backup create "$SRC") must fail, not mean the
// current folder.
func refuseEmpty(flags *pflag.FlagSet, names, args []string, argNames ...string) error {
	for _, name := range names {
		f := flags.Lookup(name)
		if !f.Changed || !hasEmpty(f.Value) {
			continue
		}
		if f.Shorthand != "" {
			return fmt.Errorf("-%s/--%s is empty", f.Shorthand, f.Name)
		}
		return fmt.Errorf("--%s is empty", f.Name)
	}
	for i, arg := range args {
		if arg == "" {
			return fmt.Errorf("%s is empty", argNames[min(i, len(argNames)-1)])
		}
	}
	return nil
}

func hasEmpty(v pflag.Value) bool {
	list, ok := v.(pflag.SliceValue)
	if !ok {
		return v.String() == ""
	}
	for _, s := range list.GetSlice() {
		if s == "" {
			return true
		}
	}
	return false
}

// pathArg is a path a command reads or writes, with how the user named it for messages.
type pathArg struct {
	what, path string
	// info is the file itself when the command holds it open rather than by name (stdout's
	// file); the path, when there is one, then is where it was found.
	info fs.FileInfo
	// kind, for an output file, is what it writes: inside a SOURCE folder it may replace
	// only a file of that kind (one a run wrote before). nil: not checked against SOURCE
	// folders (stdout's file, which the shell opened and emptied already; folders).
	kind *outputKind
	// file says the output names a file: an existing folder, FIFO, device or socket at its
	// path is refused.
	file bool
}

// outputKind is what an output file holds: a file of this kind at its path was written by
// a run before, and the next may replace it.
type outputKind struct {
	name string // "a receipt"
	is   func(path string) bool
}

// pathCheck is the one check every command's outputs pass before anything is written, and
// every output flag a command has, or gains, joins: an output is never an input, never
// another output, never in a folder that holds only its owner's files, and never replaces a
// user's file inside a SOURCE. "Is" means the same file once every symlink on the way is
// resolved (a symlink, a symlinked folder, a/../b), or the same device and inode (a hard
// link). Once, --metrics-file a.zip replaced the archive it described with Prometheus text,
// and the run said complete.
type pathCheck struct {
	inputs  []pathArg // files and folders the command reads
	sources []pathArg // folders whose files the run reads (a SOURCE)
	sealed  []pathArg // folders that hold only their owner's files (a backup set, DEST)
	outputs []pathArg // files and folders the command writes
}

// err returns the first rule an output breaks, as one line naming it and what it collides
// with, or nil.
func (pc pathCheck) err() error {
	for i, out := range pc.outputs {
		if err := out.fileOutput(); err != nil {
			return err
		}
		for _, other := range append(pc.inputs[:len(pc.inputs):len(pc.inputs)], pc.outputs[:i]...) {
			if sameFile(out, other) {
				return fmt.Errorf("%s is also %s", out.what, other.what)
			}
		}
		for _, folder := range pc.sealed {
			if sameFile(out, folder) {
				return fmt.Errorf("%s is %s", out.what, folder.what)
			}
			if inside(out, folder) {
				return fmt.Errorf("%s is inside %s", out.what, folder.what)
			}
		}
		if err := out.replacesInput(pc.sources); err != nil {
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
func (out pathArg) fileOutput() error {
	if !out.file || out.path == "" {
		return nil
	}
	target, err := os.Stat(out.path)
	if err == nil && target.IsDir() {
		return fmt.Errorf("%s is a folder", out.what)
	}
	info, lerr := os.Lstat(out.path)
	if lerr != nil {
		return nil
	}
	if kind := specialKind(info.Mode()); kind != "" {
		return fmt.Errorf("%s is %s, not a regular file: give another path", out.what, kind)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if err == nil && specialKind(target.Mode()) != "" {
		return fmt.Errorf("%s is a symlink to %s, which the output would replace: give another path", out.what, specialKind(target.Mode()))
	}
	if via := throughProc(out.path); via != "" {
		return fmt.Errorf("%s is a symlink to %s, which the output would replace: give another path", out.what, via)
	}
	return nil
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
func (out pathArg) replacesInput(sources []pathArg) error {
	if out.kind == nil || out.path == "" {
		return nil
	}
	at := resolveDir(out.path) // the name a rename replaces: a symlink there, not its target
	if _, err := os.Lstat(at); err != nil || out.kind.is(at) {
		return nil
	}
	for _, src := range sources {
		if inside(pathArg{path: at}, src) {
			return fmt.Errorf("%s is a file inside %s that is not %s", out.what, src.what, out.kind.name)
		}
	}
	return nil
}

// sameFile reports whether a and b are one file: the same resolved path, or the same device
// and inode.
func sameFile(a, b pathArg) bool {
	if a.path != "" && b.path != "" && resolvePath(a.path) == resolvePath(b.path) {
		return true
	}
	ia, ib := a.stat(), b.stat()
	return ia != nil && ib != nil && os.SameFile(ia, ib)
}

// inside reports whether p is below the folder dir: one of the folders above p, resolved, is
// dir by path or by device and inode (a bind mount, a second name of a folder).
func inside(p, dir pathArg) bool {
	if p.path == "" || dir.path == "" {
		return false
	}
	root := resolvePath(dir.path)
	rootInfo := dir.stat()
	for d := filepath.Dir(resolvePath(p.path)); ; d = filepath.Dir(d) {
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

func (p pathArg) stat() fs.FileInfo {
	if p.info != nil {
		return p.info
	}
	info, err := os.Stat(p.path)
	if err != nil {
		return nil
	}
	return info
}

// resolvePath is the absolute path the kernel reaches at path: every symlink resolved as far
// as the path exists, a dangling one by its target, and ".." taken after the symlink before
// it, as the kernel does (so a/.. is not "." when a is a symlink). The part that does not
// exist yet is joined as given.
func resolvePath(path string) string {
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(path)
		}
		abs = wd + string(filepath.Separator) + path // not Join: Join would clean a/.. away
	}
	return resolveFrom(abs, 0)
}

// maxLinks is how many symlinks resolvePath follows, as the kernel's limit (40) on Linux.
const maxLinks = 40

func resolveFrom(abs string, links int) string {
	prefix, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(prefix); err == nil {
			if rest == "" {
				return r
			}
			first, after, _ := strings.Cut(rest, string(filepath.Separator))
			if target, err := os.Readlink(filepath.Join(r, first)); err == nil && links < maxLinks {
				// A dangling symlink: what is created through it lands at its target.
				if !filepath.IsAbs(target) {
					target = r + string(filepath.Separator) + target
				}
				return resolveFrom(target+string(filepath.Separator)+after, links+1)
			}
			return filepath.Join(r, rest)
		}
		dir, base := filepath.Split(strings.TrimRight(prefix, string(filepath.Separator)))
		if dir == "" || base == "" {
			return filepath.Clean(abs)
		}
		prefix, rest = dir, base+string(filepath.Separator)+rest
		rest = strings.TrimSuffix(rest, string(filepath.Separator))
	}
}

// resolveDir is path made absolute with the symlinks of its folder resolved, its last name as
// given: where a file written by rename lands (a symlink there is replaced, not followed).
func resolveDir(path string) string {
	i := strings.LastIndexByte(path, filepath.Separator)
	if i < 0 {
		return filepath.Join(resolvePath("."), path)
	}
	// Not filepath.Dir, which would clean lnk/.. away before lnk is resolved.
	return filepath.Join(resolvePath(path[:i+1]), path[i+1:])
}
