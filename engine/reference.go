package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"backup/archive"
	"backup/format"
	"backup/seal"
)

// openReference opens Options.Reference, the archive whose entries of unchanged files the
// run copies. One that cannot be trusted (see openTrusted) gets a full run, which
// Hooks.NoReuse is told of: copying from it could carry its gaps, damage or edits forward,
// and a doubt about a reference must never cost a backup.
func (e *Engine) openReference(ctx context.Context) error {
	path := e.opts.Reference
	if path == "" {
		return nil
	}
	opts := e.opts.Reuse
	opts.Unseal = asNamed(path, e.opts.Identities.Unseal) // an encrypted reference needs one of them
	ref, rc, err := openTrusted(ctx, path, e.opts.ReferenceReceipt, e.opts.Method, e.opts.Level, opts)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e.Hooks.NoReuse(fmt.Errorf("%s: %w", path, err))
		return nil
	}
	if err := ref.Older(); err != nil {
		// Trusted, but nothing to copy: a full run, said as for a reference not trusted.
		ref.Close()
		e.Hooks.NoReuse(fmt.Errorf("%s: %w", path, err))
		return nil
	}
	e.ref = ref
	e.refReadBack = e.opts.ReferenceReadBack && readBackWhole(rc)
	e.Hooks.Expect(ref.Reusable())
	return nil
}

// ErrNotAsNamed is the error of a reference named as an encrypted archive that is a plain
// zip: a backup someone replaced, which nothing else would report (verify without a key
// reads it as the zip it is).
var ErrNotAsNamed = errors.New("it is named as an encrypted archive (" + seal.Ext + "), but is a plain zip")

// asNamed is unseal for the reference at path, refusing one named as an encrypted archive
// (NAME.zip.age) that is a plain zip: every archive of an encrypted set is encrypted, and
// whoever can write the set could put a zip there, with a receipt to match, that a run
// without a key (which reads every file otherwise: it cannot open its set) would copy from.
func asNamed(path string, unseal archive.Unseal) archive.Unseal {
	if !strings.HasSuffix(path, seal.Ext) {
		return unseal
	}
	return func(file io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
		sealed, err := seal.ReadsSealed(file)
		switch {
		case err != nil:
			return nil, 0, err
		case !sealed:
			return nil, 0, ErrNotAsNamed
		}
		return unseal(file, size)
	}
}

// openTrusted opens the archive at path as a reference when its receipt (rc, or when nil
// the one beside it) says complete and describes this very file: the file's size and
// SHA-256 are the receipt's (the whole file is hashed), and the manifest that hash proves
// says complete too. Every entry copied is still checked against the SHA-256 its manifest
// records for its compressed bytes. method and level are the run's: an entry compressed
// otherwise is not copied.
func openTrusted(ctx context.Context, path string, rc *format.Receipt, method format.Method, level int, opts archive.ReuseOptions) (*archive.Reference, *format.Receipt, error) {
	if rc == nil {
		var err error
		if rc, err = format.ReadReceipt(format.ReceiptPath(path)); err != nil {
			return nil, nil, fmt.Errorf("its receipt: %w", cause(err))
		}
	}
	if rc.Status != format.Complete {
		return nil, nil, fmt.Errorf("its receipt says %s; only a complete backup is a reference", rc.Status)
	}
	want, ok := rc.Summary()
	if !ok {
		return nil, nil, errors.New("its receipt describes no archive")
	}
	opts.Started = rc.StartedAt
	ref, err := archive.OpenReference(ctx, path, want, method, level, opts)
	if err != nil {
		return nil, nil, cause(err)
	}
	if s := ref.Status(); s != string(format.Complete) { // a receipt edited to say complete
		ref.Close()
		return nil, nil, fmt.Errorf("its manifest says %s; only a complete backup is a reference", s)
	}
	return ref, rc, nil
}

// readBackWhole says whether rc, a set's LATEST's receipt, records an archive read back
// whole before LATEST named it: a plain one always is; an encrypted one only when its run
// could decrypt it (read_back "contents"). One checked as ciphertext alone (a run without
// an identity) had no entry inflated by anyone, so the entries copied from it are
// inflated by the read-back, as those of a --reference are.
func readBackWhole(rc *format.Receipt) bool {
	return rc.Encryption == nil || rc.Encryption.ReadBack == format.ReadBackContents
}

// closeReference closes the reference once every entry it gives is in the archive.
func (e *Engine) closeReference() {
	if e.ref != nil {
		e.ref.Close()
		e.ref = nil
	}
}
