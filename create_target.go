package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"backup/atomicfile"
	"backup/engine"
	"backup/format"
)

// target is where a run's archive and receipt go: files side by side (fileTarget), the
// archive on stdout and its receipt in a file (stdoutTarget, create_stdout.go), or objects
// of a set in a bucket (uploadTarget, create_s3.go).
type target interface {
	// paths are the archive's and the receipt's paths (in a bucket, their s3:// URLs).
	paths() outputPaths
	// open starts what the engine writes the archive into.
	open(ctx context.Context) (engine.Output, error)
	// place puts the finished archive and its receipt rc in place, as one unit as far as
	// the target allows: after a failure the final paths hold what they held before.
	place(ctx context.Context, res *engine.Result, rc *format.Receipt) error
	// abort drops what open started and place did not finish.
	abort()
	// writeFailed writes the receipt of a run that failed, unless an archive is at the
	// final path: its receipt must keep describing it. wrote says whether it wrote one.
	writeFailed(ctx context.Context, rc *format.Receipt) (wrote bool, err error)
	// replace replaces the receipt the run wrote with rc, which says the archive failed
	// its read-back.
	replace(ctx context.Context, rc *format.Receipt) error
	// rewrite replaces the receipt the run wrote with rc, the --exec-after hooks added.
	rewrite(rc *format.Receipt) error
	// hookReceipt is a file holding rc for the --exec-after hooks, and what removes it
	// once they are done.
	hookReceipt(rc *format.Receipt) (path string, done func(), err error)
}

// receiptFile is a receipt in a file of its own, beside the archive or where --receipt says.
type receiptFile struct {
	out outputPaths
}

func (r receiptFile) paths() outputPaths { return r.out }

func (r receiptFile) abort() {}

func (r receiptFile) writeFailed(_ context.Context, rc *format.Receipt) (bool, error) {
	return true, r.write(rc)
}

func (r receiptFile) replace(_ context.Context, rc *format.Receipt) error { return r.write(rc) }

func (r receiptFile) rewrite(rc *format.Receipt) error { return r.write(rc) }

func (r receiptFile) hookReceipt(*format.Receipt) (string, func(), error) {
	return r.out.receipt, func() {}, nil
}

// write writes rc to the receipt's path atomically.
func (r receiptFile) write(rc *format.Receipt) error {
	data, err := rc.Stored().Marshal()
	if err == nil {
		err = atomicfile.WriteFile(r.out.receipt, data, 0o600)
	}
	return err
}

// fileTarget writes the archive to a temp file beside its final path, then puts it and its
// receipt in place as one unit.
type fileTarget struct {
	receiptFile
	force bool // an archive at the path is replaced
	// inSet: in a set a crash between the renames must leave the receipt alone (a run
	// prune removes once superseded), never the archive (kept for ever as unknown).
	inSet bool
	// left is, after place, why the old receipt it replaced could not be removed.
	left error
}

func (t *fileTarget) open(context.Context) (engine.Output, error) {
	return engine.Output{Path: t.out.archive, Replace: t.force}, nil
}

// place publishes the archive and its receipt as one unit: after a failure the final paths
// hold the old pair (or nothing), and the error says so. The receipt is staged first, so
// that a full disk fails the run before anything moves; an interrupt that comes while it is
// staged (synced) stops it before the first rename.
func (t *fileTarget) place(ctx context.Context, res *engine.Result, rc *format.Receipt) error {
	data, err := rc.Stored().Marshal()
	if err != nil {
		return err
	}
	staged, err := atomicfile.Stage(t.out.receipt, data, 0o600)
	if err != nil {
		return fmt.Errorf("writing receipt %s: %w", t.out.receipt, cause(err))
	}
	if err := ctx.Err(); err != nil {
		staged.Discard()
		return err
	}
	if t.inSet {
		err = res.CommitLast(staged)
	} else {
		err = res.Commit(staged)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return &outputExists{t.out.archive}
	case err != nil:
		return fmt.Errorf("putting archive %s and receipt %s in place: %w", t.out.archive, t.out.receipt, err)
	}
	t.left = staged.Left
	return nil
}

// leftBehind is why the old receipt that place replaced could not be removed.
func (t *fileTarget) leftBehind() error { return t.left }

func (t *fileTarget) writeFailed(_ context.Context, rc *format.Receipt) (bool, error) {
	if exists(t.out.archive) {
		return false, nil
	}
	return true, t.write(rc)
}

// outputExists is the error of an output that exists, found before the run or taken by
// another run while this one wrote it: a name chosen as free (a before-state's) can be
// chosen again, and writeBeforeState then takes the next.
type outputExists struct{ path string }

func (e *outputExists) Error() string {
	return fmt.Sprintf("output %s exists (use --force to replace it)", e.path)
}

func (e *outputExists) Unwrap() error { return fs.ErrExist }
