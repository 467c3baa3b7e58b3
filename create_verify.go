package main

import (
	"context"
	"fmt"

	"backup/archive"
)

// beforeVerify is a test hook: it sees the closed temp archive before --verify reads it.
var beforeVerify = func(tempPath string) {}

// verify reads the closed temp archive back, as backup verify would with its receipt, before
// it is renamed into place: a failed check fails the run.
func (c *creation) verify(ctx context.Context, sum archive.Summary) error {
	beforeVerify(c.w.TempPath())
	res, err := archive.VerifyWith(ctx, c.w.TempPath(), archive.VerifyOptions{Expect: &sum})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("verifying archive %s: %w", c.out.archive, cause(err))
	}
	if !res.OK() {
		more := ""
		if n := len(res.Problems); n > 1 {
			more = fmt.Sprintf(" (and %d more problems)", n-1)
		}
		return fmt.Errorf("verifying archive %s: %s%s", c.out.archive, res.Problems[0], more)
	}
	return nil
}
