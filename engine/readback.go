package engine

import (
	"context"
	"fmt"

	"backup/archive"
)

// verify reads the closed temp archive back, as backup verify would with its receipt, before
// it is put in place: a failed check fails the run.
func (e *Engine) verify(ctx context.Context, res *Result) error {
	temp := e.w.TempPath()
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
func (r *Result) ReadBack(ctx context.Context, path string) error {
	res, err := archive.ReadBack(ctx, path, r.Manifest, r.Sum, archive.VerifyOptions{})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return cause(err)
	}
	return res.Err()
}
