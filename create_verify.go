package main

import (
	"context"
	"fmt"

	"backup/archive"
	"backup/format"
)

// beforeVerify is a test hook: it sees the closed temp archive before --verify reads it.
var beforeVerify = func(tempPath string) {}

// verify reads the closed temp archive back, as backup verify would with its receipt, before
// it is renamed into place: a failed check fails the run.
func (c *creation) verify(ctx context.Context, sum format.Summary) error {
	beforeVerify(c.w.TempPath())
	err := c.readBack(ctx, c.w.TempPath(), sum)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("verifying archive %s: %w", c.out.archive, err)
	}
	return err
}

// readBack reads the archive at path back as backup verify does, against the size and
// SHA-256 its receipt records and the manifest this run wrote, except that the entries
// copied from the reference are not inflated again (see archive.ReadBack). The error names
// the first problem, or is ctx's error.
func (c *creation) readBack(ctx context.Context, path string, sum format.Summary) error {
	written := archive.Summary{Summary: sum, ManifestSHA256: c.manifestSum}
	res, err := archive.ReadBack(ctx, path, c.manifest, written, archive.VerifyOptions{})
	return verdict(ctx, res, err)
}

// verdict turns a read-back's result into its error: the first problem, or ctx's error.
func verdict(ctx context.Context, res *archive.VerifyResult, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return cause(err)
	}
	if !res.OK() {
		more := ""
		if n := len(res.Problems); n > 1 {
			more = fmt.Sprintf(" (and %d more problems)", n-1)
		}
		return fmt.Errorf("%s%s", res.Problems[0], more)
	}
	return nil
}
