package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"backup/backupset"
	"backup/format"
	"backup/hooks"
)

// runBefore runs the --exec-before hooks, then reads the --exclude-from files again. A hook
// that fails, or a list it left unreadable or bad, fails the run before anything is written:
// no archive, no receipt (the metrics and --exec-after hooks still report it).
func (c *creation) runBefore(ctx context.Context, stderr io.Writer) (int, bool) {
	if len(c.cfg.hooks.Before) == 0 {
		return 0, true
	}
	ran, err := c.cfg.hooks.RunBefore(ctx, hooks.Env{Command: "create", Set: c.setDir()}, stderr)
	c.hooks = ran
	if err == nil {
		err = c.rereadExcludes()
	}
	if err == nil {
		// A hook may mount what the run writes into or reads (the backup disk): the paths
		// checked before it ran may now lead elsewhere, two outputs to one file.
		if err = c.cfg.checkOutputs(c.cfg.checkInputs, c.stdout); err != nil {
			c.cfg.metricsFile = "" // it may be the output that collides
		}
	}
	if err == nil {
		return 0, true
	}
	if ctx.Err() != nil {
		err = errInterrupted
	}
	rc := c.receipt(nil, err)
	sayf(stderr, "backup: failed: %v\n", err)
	c.final = rc
	return exitCode(rc, err), false
}

// rereadExcludes reads the --exclude-from files again once the before hooks ran: the hooks
// run before anything else, and one may write the list (the files to leave out today). The
// read when the flags were checked found a missing or bad file as a usage error first.
func (c *creation) rereadExcludes() error {
	if len(c.cfg.excludeFrom) == 0 {
		return nil
	}
	return c.cfg.readExcludes(c.cfg.excludes, c.cfg.excludeFrom)
}

// finish reports the outcome beyond the summary: the metrics file, the --exec-after hooks
// (their exit codes added to the receipt the run wrote), and last the receipt on stdout.
// None of it changes the exit code. In a set the metrics file is written under the set's
// lock, so that a run the release lets in writes its metrics after this one's; the hooks run
// once it is released, as prune's do (a hook may run backup on the set), and the receipt
// is rewritten under the lock taken again (see rewriteReceipt).
func (c *creation) finish(code int, stdout, stderr io.Writer) {
	rc := c.final
	if rc != nil && c.cfg.metricsFile != "" && !c.cfg.dryRun {
		if err := c.writeMetrics(rc, code, stderr); err != nil {
			sayf(stderr, "backup: could not write metrics %s: %v\n", c.cfg.metricsFile, cause(err))
		}
	}
	if c.lock != nil {
		releaseSet(c.lock, "backup", stderr)
		c.lock = nil
	}
	if len(c.cfg.hooks.After) > 0 {
		c.runAfter(rc, code, stderr)
	}
	// A reader that went away (| head -1) cut its own copy short; the receipt file and the
	// exit code stand, and a line says so.
	if rc != nil && c.cfg.json {
		data, err := rc.Marshal()
		if err == nil {
			_, err = stdout.Write(data)
		}
		if err != nil {
			sayf(stderr, "backup: writing --json to stdout: %v\n", cause(err))
		}
	}
	if rc != nil {
		if err := c.events.Result(rc); err != nil {
			sayf(stderr, "backup: writing --json-lines to stdout: %v\n", cause(err))
		}
	}
}

func (c *creation) runAfter(rc *format.Receipt, code int, stderr io.Writer) {
	var archive, errText string
	receipt, done := c.hookReceipt(rc, stderr)
	defer done()
	if rc != nil {
		errText = rc.Error
		if rc.Archive != nil && rc.Status != format.Failed {
			archive = rc.Archive.Path
		}
	}
	if errText == "" && code != exitComplete {
		errText = c.failure // a receipt that records no error, of a run that failed after it
	}
	env := hooks.Env{Command: "create", ExitCode: code, Status: outcome(code), Set: c.setDir(),
		Archive: archive, Receipt: receipt, Error: errText}
	ran := c.cfg.hooks.RunAfter("backup", env, stderr)
	if rc == nil {
		return
	}
	if !c.written {
		// No receipt file to rewrite, but --json and --json-lines still print the run's
		// receipt, and it records every hook that ran.
		rc.Hooks = append(rc.Hooks, ran...)
		return
	}
	written, err := rc.Stored().Marshal()
	rc.Hooks = append(rc.Hooks, ran...)
	if err == nil {
		err = c.rewriteReceipt(rc, written)
	}
	if err != nil {
		sayf(stderr, "backup: could not add the hooks to receipt %s: %v\n", c.paths().receipt, cause(err))
	}
}

// rewriteWait is the least a run waits to take its set's lock again, to add the after hooks
// to its receipt.
const rewriteWait = time.Minute

// rewriteReceipt replaces the receipt the run wrote (written, as it was written) with rc. In
// a folder set, nothing is written without the set's lock: it is taken again (waiting up to
// --wait, at least rewriteWait), and the receipt is replaced only while it is still the one
// the run wrote: a run that pruned it meanwhile is not undone. A bucket's receipt object is
// replaced on the ETag the run wrote, which the server checks.
func (c *creation) rewriteReceipt(rc *format.Receipt, written []byte) error {
	set := c.cfg.set
	if set == nil || !set.local() {
		return c.target.rewrite(rc)
	}
	ctx, stop := interruptible()
	defer stop()
	lock, err := backupset.Acquire(ctx, set.store, max(set.wait, rewriteWait))
	if err != nil {
		return err
	}
	defer lock.Release()
	path := c.paths().receipt
	f, _, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("it is no longer in the set (pruned meanwhile)")
	}
	if err != nil {
		return err
	}
	current, err := io.ReadAll(io.LimitReader(f, int64(len(written))+1))
	f.Close()
	if err != nil {
		return err
	}
	if !bytes.Equal(current, written) {
		return errors.New("it was replaced since the run wrote it")
	}
	return c.target.rewrite(rc)
}

// hookReceipt is the receipt the --exec-after hooks get as BACKUP_RECEIPT ("" when the run
// wrote none), and what removes a copy made for them once they end (see target.hookReceipt).
func (c *creation) hookReceipt(rc *format.Receipt, stderr io.Writer) (path string, done func()) {
	if rc == nil || !c.written {
		return "", func() {}
	}
	path, done, err := c.target.hookReceipt(rc)
	if err != nil {
		sayf(stderr, "backup: could not copy receipt %s for the hooks: %v\n", c.paths().receipt, cause(err))
	}
	return path, done
}

// setDir is the backup set's folder, or for a run outside a set the folder the archive goes
// to: what hooks get as BACKUP_SET and metrics as the set label.
func (c *creation) setDir() string {
	if c.cfg.set != nil {
		return c.cfg.set.dir
	}
	if archive := c.paths().archive; archive != "" {
		return filepath.Dir(archive)
	}
	if c.cfg.output != "" {
		abs, _ := absPath(c.cfg.output)
		return filepath.Dir(abs)
	}
	abs, _ := absPath(c.cfg.outputDir)
	return abs
}
