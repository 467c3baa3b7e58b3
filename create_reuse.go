package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"backup/archive"
	"backup/backupset"
	"backup/format"
)

// reuseFlags say where unchanged files' entries may be copied from.
type reuseFlags struct {
	reference string // --reference ARCHIVE, outside a set
	reread    bool   // --reread: read every file, copy nothing
	opts      archive.ReuseOptions
}

// openReference opens the archive whose entries of unchanged files this run copies: the
// one --reference names, or in a backup set the one LATEST names. A reference that cannot
// be trusted (see openTrusted), or a LATEST that cannot, gets a full run, said in one line:
// copying from it could carry its gaps, damage or edits forward, and a doubt about a
// reference must never cost a backup. A --reference that is not there at all is an error:
// it was asked for, and is most likely mistyped. A set in a bucket gets a full run too: its
// archives are not read for reuse (yet). nil means a full run.
func (c *creation) openReference(ctx context.Context, stderr io.Writer) (*archive.Reference, error) {
	path, err := c.referencePath(ctx, stderr)
	if path == "" || err != nil {
		return nil, err
	}
	ref, err := openTrusted(ctx, path, c.cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.fullRun(stderr, fmt.Errorf("%s: %w", path, err))
		return nil, nil
	}
	return ref, nil
}

// referencePath is the archive a reference is to be opened from; "" for a full run.
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
		return f.reference, nil
	case c.cfg.set == nil:
		return "", nil
	}
	folder, ok := c.cfg.set.store.(backupset.Folder)
	if !ok {
		return "", nil
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
// run has said already that LATEST is damaged (one line for one fault).
func (c *creation) fullRun(stderr io.Writer, err error) {
	if !c.cfg.quiet && (c.cfg.set == nil || !c.cfg.set.pointerSaid) {
		fmt.Fprintf(stderr, "backup: reading every file: no unchanged entry is copied: %v\n", err)
	}
}

// openTrusted opens the archive at path as a reference when its receipt says complete and
// describes this very file: the file's size and SHA-256 are the receipt's (the whole file
// is hashed), and the manifest that hash proves says complete too. Every entry copied is
// still checked against the SHA-256 its manifest records for its compressed bytes.
func openTrusted(ctx context.Context, path string, cfg createConfig) (*archive.Reference, error) {
	rc, err := format.ReadReceipt(format.ReceiptPath(path))
	if err != nil {
		return nil, fmt.Errorf("its receipt: %w", cause(err))
	}
	if rc.Status != format.Complete {
		return nil, fmt.Errorf("its receipt says %s; only a complete backup is a reference", rc.Status)
	}
	want, ok := rc.Summary()
	if !ok {
		return nil, errors.New("its receipt describes no archive")
	}
	ref, err := archive.OpenReference(ctx, path, want, cfg.method, cfg.level, cfg.reuse.opts)
	if err != nil {
		return nil, cause(err)
	}
	if s := ref.Status(); s != string(format.Complete) { // a receipt edited to say complete
		ref.Close()
		return nil, fmt.Errorf("its manifest says %s; only a complete backup is a reference", s)
	}
	return ref, nil
}
