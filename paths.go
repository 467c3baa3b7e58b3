package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"backup/backupset/s3store"
	"backup/format"
	"backup/pathcheck"
)

// absPath is the absolute path of a path the user gave: filepath.Abs's, or, when the path
// holds a "..", the one the kernel reaches (kernelPath).
func absPath(path string) (string, error) {
	if p, err := kernelPath(path); err != nil || p != path {
		return p, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &cwdError{err}
	}
	return abs, nil
}

// cwdError is absPath's error when the current folder cannot be read (getwd's stat of "."
// fails, an I/O error): no fault of the path given.
type cwdError struct{ err error }

func (e *cwdError) Error() string { return "the current folder: " + e.err.Error() }
func (e *cwdError) Unwrap() error { return e.err }

// reachedOrAsGiven is absPath(path), or path itself when the kernel cannot reach it
// (missing/..): a set's DIR then fails where it is read, as a missing DIR does, and not as
// a usage error. Nothing is cleaned away: the kernel meets the same "..".
func reachedOrAsGiven(path string) string {
	if abs, err := absPath(path); err == nil {
		return abs
	}
	return path
}

// kernelPath is path as given, or, when it holds a "..", the absolute path the kernel
// reaches there (pathcheck.Resolve) for the folder it names, with its last name as given:
// a symlink there is what the path names (an output replaces it, a SOURCE is stored under
// its name), as without "..". filepath.Abs and Join clean lnk/.. away before lnk is
// followed, where open(2) follows lnk first, so the two named different folders: a set
// written where the check of outputs against SOURCEs did not look, a restore's before-state
// read from another folder than the one restored into. A ".." the kernel cannot take (after
// a file, a symlink loop, a missing name) is the kernel's error, not a name cleaned away.
func kernelPath(path string) (string, error) {
	parts := strings.Split(path, "/")
	dotdot := -1
	for i, p := range parts {
		if p == ".." {
			dotdot = i
		}
	}
	if dotdot < 0 {
		return path, nil
	}
	// The kernel takes every ".." up to the last one, or refuses the path.
	if _, err := os.Stat(strings.Join(parts[:dotdot+1], "/")); err != nil {
		return "", err
	}
	trimmed := strings.TrimRight(path, "/")
	i := strings.LastIndexByte(trimmed, '/')
	name := trimmed[i+1:]
	if name == ".." || name == "." {
		return pathcheck.Resolve(path), nil
	}
	return filepath.Join(pathcheck.Resolve(trimmed[:i+1]), name), nil
}

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

// refuseDash refuses "-" as the value of the flags named, which name a file or folder the
// command writes: in backup "-" means stdout (-o -), and a file or set named "-" made in
// the current folder (-o - --receipt -: the archive on stdout, its receipt in ./-) is not
// what was typed. ./- names such a file.
func refuseDash(flags *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		if f := flags.Lookup(name); f.Changed && f.Value.String() == "-" {
			return fmt.Errorf("--%s -: only -o - means stdout; give ./- for a file named -", name)
		}
	}
	return nil
}

// refuseDashArg is refuseDash for an argument that names a folder the command writes into
// (restore's DEST, adopt's DIR): "-" there made a tree or a set named "-" in the current
// folder and said so only by that name.
func refuseDashArg(name, value string) error {
	if value == "-" {
		return fmt.Errorf("%s -: only -o - means stdout; give ./- for a folder named -", name)
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

// checkStdoutNotInput refuses a read-only command (verify, list) whose stdout goes into a
// regular file that is one of the files it reads: the archive, its receipt, an identity
// file, or a file in the backup set it reads (verify --json a.zip >> a.zip appended the
// report to the archive, which then failed verify; >> SET/LATEST made the set's pointer
// junk). A shell's > emptied that file already; >> is caught before anything is appended.
func checkStdoutNotInput(stdout io.Writer, archive, receipt string, identities []string) error {
	out, ok := stdoutFile(stdout, "stdout")
	if !ok {
		return nil
	}
	pc := pathcheck.Check{Outputs: []pathcheck.Arg{out}}
	info, err := os.Stat(archive)
	switch {
	case strings.HasPrefix(archive, s3store.Scheme):
		// A set in a bucket has no local file to collide with; its identity files and a
		// --receipt (verify's, read from here) do.
		if receipt != "" {
			pc.Inputs = append(pc.Inputs, pathcheck.Arg{What: "the receipt " + receipt, Path: receipt})
		}
	case err == nil && info.IsDir():
		// A set's folder: the check finds stdout's file, known by its inode only, among
		// the files the set holds.
		pc.Sealed = append(pc.Sealed, pathcheck.Arg{What: "the backup set " + format.QuoteName(archive), Path: archive})
	default:
		if receipt == "" {
			receipt = format.ReceiptPath(archive)
		}
		pc.Inputs = append(pc.Inputs, pathcheck.Arg{What: "ARCHIVE " + archive, Path: archive},
			pathcheck.Arg{What: "the receipt " + receipt, Path: receipt})
	}
	pc.Inputs = append(pc.Inputs, fileArgs("--identity", identities)...)
	return pc.Err()
}

// checkStdoutNotIdentity refuses a command's stdout that goes into one of the identity
// files it reads (activate, whose other inputs are the set's, which checkStatusOutputs
// guards): activate --json -i key.txt >> key.txt appended its report to the secret key's
// file, which then no longer parsed.
func checkStdoutNotIdentity(stdout io.Writer, identities []string) error {
	out, ok := stdoutFile(stdout, "stdout")
	if !ok {
		return nil
	}
	return pathcheck.Check{Inputs: fileArgs("--identity", identities), Outputs: []pathcheck.Arg{out}}.Err()
}

// checkStdoutNotIn refuses stdout's file (what is written there: what) inside the folder
// the command alone writes into (a restore's DEST, a bucket set's cache folder).
func checkStdoutNotIn(stdout io.Writer, what string, folder pathcheck.Arg) error {
	out, ok := stdoutFile(stdout, what)
	if !ok {
		return nil
	}
	pc := pathcheck.Check{Sealed: []pathcheck.Arg{folder}, Outputs: []pathcheck.Arg{out}}
	return pc.Err()
}

// mkdirFolder is os.MkdirAll(dir, 0o755), but a dir that is a symlink to nothing is said
// as such: MkdirAll's "file exists" named a file the user could not see. The link's target
// is not made: it may be anywhere.
func mkdirFolder(dir string) error {
	err := os.MkdirAll(dir, 0o755)
	var pe *fs.PathError
	if err == nil || !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) {
		return err
	}
	why, ok := symlinkNowhere(pe.Path)
	switch {
	case !ok:
		return err
	case filepath.Clean(pe.Path) != filepath.Clean(dir):
		// A folder above dir (lnk/sub): MkdirAll said "mkdir lnk: file exists".
		return fmt.Errorf("%s: %s", format.QuoteName(pe.Path), why)
	}
	return errors.New(why)
}

// symlinkNowhere says what the symlink at path leads to when it leads to nothing: "a
// symlink to TARGET, which does not exist", naming the missing end of a chain of links
// (a symlink to a symlink to nothing), or a loop. Said of the first link alone, a chain's
// next link, which exists, was named as missing. ok is false when path is not such a link.
func symlinkNowhere(path string) (string, bool) {
	first, err := os.Readlink(path)
	if err != nil {
		return "", false
	}
	at, target := path, first
	for range maxSymlinks {
		if !filepath.IsAbs(target) {
			// Joined as the kernel reads it, not cleaned: in sub/../x after a symlink sub,
			// ".." is the folder sub leads into, not the link's own.
			dir, err := filepath.EvalSymlinks(filepath.Dir(at))
			if err != nil {
				return "", false
			}
			target = dir + string(filepath.Separator) + target
		}
		next, err := os.Readlink(target)
		if err == nil {
			at, target = target, next
			continue
		}
		if _, lerr := os.Lstat(target); lerr == nil {
			return "", false // it ends at a file or folder
		}
		if at == path {
			return fmt.Sprintf("a symlink to %s, which does not exist", format.QuoteName(first)), true
		}
		return fmt.Sprintf("a symlink to %s, which leads to %s, which does not exist", format.QuoteName(first), format.QuoteName(target)), true
	}
	return fmt.Sprintf("a symlink to %s, in a loop of symlinks", format.QuoteName(first)), true
}

// maxSymlinks is how many links symlinkNowhere follows before it calls the chain a loop
// (the kernel's limit).
const maxSymlinks = 40

// existingFolder checks the folder a flag names that the command moves or writes files into
// but does not make (prune's --attic, restore's --undo-dir): it must exist and be a folder
// (a symlink to one is followed: the user named it), checked before anything is done so
// that a typo is a usage error, not a run that fails half-way. It returns the folder's
// absolute path; a *cwdError when the current folder cannot be read.
func existingFolder(flag, arg string) (string, error) {
	dir, err := absPath(arg)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, arg, err)
	}
	info, err := os.Stat(dir) // a stat, not an open: a FIFO does not block
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if why, ok := symlinkNowhere(dir); ok {
			return "", fmt.Errorf("%s %s: %s", flag, arg, why)
		}
		return "", fmt.Errorf("%s %s: %w", flag, arg, cause(err))
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", flag, arg, cause(err))
	case !info.IsDir():
		return "", fmt.Errorf("%s %s: not a folder", flag, arg)
	}
	return dir, nil
}
