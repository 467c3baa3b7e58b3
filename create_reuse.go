package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"backup/archive"
	"backup/backupset"
	"backup/report"
)

// reuseFlags say where unchanged files' entries may be copied from.
type reuseFlags struct {
	reference string // --reference ARCHIVE, outside a set
	reread    bool   // --reread: read every file, copy nothing
	opts      archive.ReuseOptions
}

// openReference opens the archive whose entries of unchanged files this run copies: the
// one --reference names, or in a backup set the one LATEST names. A --reference that cannot
// be used is an error: it was asked for. A set whose LATEST cannot be trusted, or names an
// incomplete backup, gets a full run, said in one line: copying from it could carry its
// gaps or damage forward. A set in a bucket gets a full run too: its archives are not read
// for reuse (yet). nil means a full run.
func (c *creation) openReference(ctx context.Context, stderr io.Writer) (*archive.Reference, error) {
	f := c.cfg.reuse
	switch {
	case f.reread:
		return nil, nil
	case f.reference != "":
		ref, err := openTrusted(f.reference, c.cfg)
		if err != nil {
			return nil, fmt.Errorf("--reference %s: %w", f.reference, err)
		}
		return ref, nil
	case c.cfg.set == nil:
		return nil, nil
	}
	folder, ok := c.cfg.set.store.(backupset.Folder)
	if !ok {
		return nil, nil
	}
	latest, err := backupset.Latest(ctx, folder)
	if errors.Is(err, backupset.ErrNoBackup) {
		return nil, nil
	}
	var ref *archive.Reference
	if err == nil {
		ref, err = openTrusted(filepath.Join(folder.Dir, latest.Name), c.cfg)
	}
	if err != nil {
		if !c.cfg.quiet && !c.cfg.set.pointerSaid {
			fmt.Fprintf(stderr, "backup: reading every file: no unchanged entry is copied: %v\n", cause(err))
		}
		return nil, nil
	}
	return ref, nil
}

// openTrusted opens the archive at path as a reference when its receipt says complete and
// describes this very file (its size), and its structure reads: every entry copied is still
// checked against the SHA-256 its manifest records for its compressed bytes.
func openTrusted(path string, cfg createConfig) (*archive.Reference, error) {
	rc, err := report.ReadReceipt(backupset.ReceiptPath(path))
	if err != nil {
		return nil, fmt.Errorf("its receipt: %w", cause(err))
	}
	if rc.Status != report.Complete {
		return nil, fmt.Errorf("its receipt says %s; only a complete backup is a reference", rc.Status)
	}
	ref, err := archive.OpenReference(path, cfg.method, cfg.level, cfg.reuse.opts)
	if err != nil {
		return nil, cause(err)
	}
	if rc.Archive == nil || rc.Archive.Size != ref.Size() {
		ref.Close()
		return nil, errors.New("its receipt describes another file (the sizes differ)")
	}
	return ref, nil
}
