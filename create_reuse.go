package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/engine"
	"backup/format"
)

// reuseFlags say where unchanged files' entries may be copied from.
type reuseFlags struct {
	reference string // --reference ARCHIVE, outside a set
	reread    bool   // --reread: read every file, copy nothing
	opts      archive.ReuseOptions
}

// referencePath is the archive whose entries of unchanged files this run copies: the one
// --reference names, or in a backup set the one LATEST names; "" for a full run. The engine
// opens it only when it can be trusted (see engine.Options.Reference); a LATEST that cannot
// be read gets a full run, said in one line (fullRun), since a doubt about a reference must
// never cost a backup. A --reference that is not there at all is an error: it was asked
// for, and is most likely mistyped. A set in a bucket copies from the local copy of LATEST's
// archive (cachedReference).
func (c *creation) referencePath(ctx context.Context, stderr io.Writer) (string, error) {
	f := c.cfg.reuse
	switch {
	case f.reread:
		return "", nil
	case f.reference != "":
		info, err := os.Stat(f.reference)
		if err == nil && !info.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			return "", fmt.Errorf("--reference %s: %w", f.reference, cause(err))
		}
		if err := replaceable(f.reference); err != nil {
			c.fullRun(stderr, fmt.Errorf("%s: %w", f.reference, err))
			return "", nil
		}
		return f.reference, nil
	case c.cfg.set == nil:
		return "", nil
	}
	folder, ok := c.cfg.set.store.(backupset.Folder)
	if !ok {
		return c.cachedReference(ctx, stderr), nil
	}
	latest, err := backupset.Latest(ctx, folder)
	switch {
	case errors.Is(err, backupset.ErrNoBackup):
		return "", nil
	case err != nil:
		c.fullRun(stderr, err)
		return "", nil
	}
	return filepath.Join(folder.Dir, latest.Name), nil
}

// fullRun says, in one line, why no entry is copied from a reference; nothing when the
// run has said already that LATEST is damaged (one line for one fault). With -q only a
// reference that no longer matches its receipt, or is a plain zip named as an encrypted
// archive, is said: a backup is damaged or replaced, and nothing else would say so.
func (c *creation) fullRun(stderr io.Writer, err error) {
	if errors.Is(err, context.Canceled) {
		return // the run was interrupted, which it says once: no fault of the reference's
	}
	quiet := c.cfg.quiet && !errors.Is(err, archive.ErrNotAsRecorded) && !errors.Is(err, engine.ErrNotAsNamed)
	if !quiet && (c.cfg.set == nil || !c.cfg.set.pointerSaid) {
		more := ""
		if isNoIdentity(err) {
			more = " (--identity FILE lets a run copy from it)"
		}
		sayf(stderr, "backup: reading every file: no unchanged entry is copied: %v%s\n", err, more)
	}
}

// replaceable says why another user could put an archive of theirs, with a receipt that
// records it, at the reference at path: it or its receipt is theirs or writable by others,
// or a folder on the way to either (as given and as its symlinks resolve) fails atomicfile.FixedPath,
// the rule of the local copies of sets in a bucket. Such a reference would lend this run's
// archive their bytes for files they cannot write, under the metadata stat shows anyone.
// A receipt that is not there is the engine's to say.
func replaceable(path string) error {
	for _, p := range []string{path, format.ReceiptPath(path)} {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && p != path {
			continue
		}
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		switch {
		case ok && st.Uid != 0 && int(st.Uid) != os.Geteuid():
			return fmt.Errorf("%s belongs to another user (uid %d), who could put an archive of theirs there", p, st.Uid)
		case info.Mode().Perm()&0o022 != 0:
			return fmt.Errorf("%s may be written by others (mode %v)", p, info.Mode().Perm())
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		for _, d := range []string{filepath.Dir(p), filepath.Dir(resolved)} {
			if err := atomicfile.FixedPath(d); err != nil {
				return err
			}
		}
	}
	return nil
}
