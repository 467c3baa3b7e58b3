package engine

import (
	"context"
	"fmt"

	"backup/archive"
	"backup/format"
)

// verify reads the closed temp archive back, as backup verify would with its receipt, before
// it is put in place: a failed check fails the run.
func (e *Engine) verify(ctx context.Context, res *Result) error {
	temp := e.w.TempPath()
	if e.sealer != nil {
		temp = e.sealer.file.Name()
	}
	if e.opts.BeforeVerify != nil {
		e.opts.BeforeVerify(temp)
	}
	err := res.ReadBack(ctx, temp)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("verifying archive %s: %w", e.opts.Output.Path, err)
	}
	return err
}

// ReadBack reads the archive at path (the run's, where Commit put it) back as backup verify
// does, against Sum and Manifest, except that the entries copied from the reference are not
// inflated again (see archive.ReadBack). The error names the first problem, or is ctx's.
//
// An encrypted archive is decrypted for it when an identity of the run's is one of its
// recipients; otherwise only its ciphertext can be checked (its size and SHA-256 against Sum,
// its age header), which ReadBackChecks says.
func (r *Result) ReadBack(ctx context.Context, path string) error {
	if r.sealed && r.ids == nil {
		err := checkCiphertext(ctx, path, r.Sum.Summary)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return cause(err)
	}
	opts := archive.VerifyOptions{InflateCopied: r.inflateCopied}
	if r.sealed {
		opts.Unseal = r.ids.Unseal
	}
	res, err := archive.ReadBack(ctx, path, r.Manifest, r.Sum, opts)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return cause(err)
	}
	return res.Err()
}

// ReadBackChecks says what ReadBack checks of an encrypted archive: format.ReadBackContents
// when an identity of the run's decrypts it, format.ReadBackCiphertext otherwise; "" for a
// plain archive, whose read-back checks everything.
func (r *Result) ReadBackChecks() string {
	switch {
	case !r.sealed:
		return ""
	case r.ids != nil:
		return format.ReadBackContents
	}
	return format.ReadBackCiphertext
}
