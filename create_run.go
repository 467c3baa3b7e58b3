package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/report"
)

// errInterrupted is the fatal error of a run stopped by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// creation is one run of backup create.
type creation struct {
	cfg     createConfig
	rec     *report.Recorder
	started time.Time
	out     outputPaths
	w       *archive.Writer     // nil in a dry run
	ref     *archive.Reference  // unchanged files' entries are copied from it; nil: a full run
	copied  map[string]struct{} // the names of the entries copied from ref
	owners  archive.Owners
}

// gcPercent is the GC target of a backup run, unless GOGC says otherwise. What a backup keeps
// (the central directory, the manifest's list) only grows, and its garbage is per-file
// buffers: collecting at 1.4 times the live heap instead of 2 keeps a million-file backup
// near 510 MiB instead of 690, at the same CPU time (measured; see BENCHMARKS.md).
const gcPercent = 40

func createBackup(cfg createConfig, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := interruptible()
	defer stop()
	var lock *backupset.Lock
	if cfg.set != nil && !cfg.dryRun {
		// Before anything is written: a run that finds the set locked leaves no trace.
		var code int
		if lock, code = cfg.set.lock(ctx, cfg.sources[0].name, stderr); lock == nil {
			return code
		}
		defer lock.Release()
	}
	c := &creation{cfg: cfg, rec: report.NewRecorder(cfg.policy), started: time.Now()}
	rc, err := c.run(ctx, stderr)
	if err == nil && lock != nil {
		return c.finishSet(ctx, lock, rc, stdout, stderr)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = errInterrupted
		}
		rc = c.receipt(nil, err)
	}
	c.print(rc, stdout, stderr)
	if err != nil {
		c.writeFailedReceipt(rc, stderr) // after the summary: the cause of the failure comes first
	}
	return exitCode(rc, err)
}

func exitCode(rc *report.Receipt, err error) int {
	switch {
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case rc.Status == report.Failed:
		return exitFailed
	case rc.Status == report.Incomplete:
		return exitIncomplete
	}
	return exitComplete
}

func (c *creation) receipt(arch *report.ArchiveInfo, err error) *report.Receipt {
	sources := make([]string, len(c.cfg.sources))
	for i, s := range c.cfg.sources {
		sources[i] = s.path
	}
	return c.rec.Receipt(report.Run{
		ToolVersion: version,
		Started:     c.started,
		Finished:    time.Now(),
		DryRun:      c.cfg.dryRun,
		Sources:     sources,
		Archive:     arch,
		Err:         err,
	})
}

// run backs up the sources and returns the receipt, written next to the archive; or the
// fatal error that stopped it, with nothing at the final path.
func (c *creation) run(ctx context.Context, stderr io.Writer) (*report.Receipt, error) {
	out, err := c.cfg.resolveOutput(c.started)
	if err != nil {
		return nil, err
	}
	c.out = out
	if err := c.checkSources(); err != nil {
		return nil, err
	}
	if c.ref, err = c.openReference(stderr); err != nil {
		return nil, err
	}
	if c.ref != nil {
		defer c.ref.Close()
	}
	if c.cfg.dryRun {
		if err := c.walk(ctx); err != nil {
			return nil, err
		}
		return c.receipt(nil, nil), nil
	}
	if err := c.openArchive(ctx); err != nil {
		return nil, err
	}
	rc, err := c.write(ctx, stderr)
	if err != nil {
		c.w.Abort()
	}
	return rc, err
}

// onFile records a stored file, and remembers the names of those copied from the reference
// for the read-back.
func (c *creation) onFile(f archive.File) {
	c.rec.File(f)
	if f.Reused {
		if c.copied == nil {
			c.copied = map[string]struct{}{}
		}
		c.copied[f.Path] = struct{}{}
	}
}

func (c *creation) checkSources() error {
	for _, s := range c.cfg.sources {
		info, err := os.Stat(s.path)
		if err != nil {
			return fmt.Errorf("source %s: %w", s.path, cause(err))
		}
		if !info.IsDir() && !info.Mode().IsRegular() {
			return fmt.Errorf("source %s: not a directory or a regular file", s.path)
		}
	}
	return nil
}

func (c *creation) openArchive(ctx context.Context) error {
	w, err := archive.Create(ctx, filepath.Dir(c.out.archive), filepath.Base(c.out.archive), archive.Options{
		Method:    c.cfg.method,
		Level:     c.cfg.level,
		Jobs:      c.cfg.jobs,
		Reference: c.ref,
		OnFile:    c.onFile,
		OnDir:     c.rec.Dir,
		OnSymlink: c.rec.Symlink,
		OnSkip:    c.rec.Skip,
		OnWarn:    c.rec.Warn,
	})
	if err != nil {
		return fmt.Errorf("creating archive %s: %w", c.out.archive, cause(err))
	}
	c.w = w
	for _, p := range []string{w.TempPath(), c.out.archive, c.out.receipt} {
		if info, err := os.Lstat(p); err == nil {
			c.cfg.rules.Self = append(c.cfg.rules.Self, info)
		}
	}
	return nil
}

// write walks into the archive, then puts the archive and its receipt in place: the receipt
// is staged first, so that a full disk fails the run before anything moves.
func (c *creation) write(ctx context.Context, stderr io.Writer) (*report.Receipt, error) {
	p := c.startProgress(ctx, stderr)
	err := c.walk(ctx)
	if err == nil {
		err = c.w.Wait()
	}
	p.Stop()
	if err != nil {
		return nil, c.archiveError(err)
	}
	sum, err := c.w.CloseManifest(c.rec.Manifest(version))
	if err != nil {
		return nil, c.archiveError(err)
	}
	if c.cfg.verify {
		if err := c.verify(ctx, sum); err != nil {
			return nil, err
		}
	}
	rc := c.receipt(&report.ArchiveInfo{Path: c.out.archive, Size: sum.Size, SHA256: sum.SHA256}, nil)
	return rc, c.place(rc)
}

// place publishes the archive and its receipt as one unit: after a failure the final paths
// hold the old pair (or nothing), and the error says so.
func (c *creation) place(rc *report.Receipt) error {
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	staged, err := atomicfile.Stage(c.out.receipt, data, 0o600)
	if err != nil {
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	err = c.w.Commit(c.out.archive, c.cfg.force, staged)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("output %s exists (use --force to replace it)", c.out.archive)
	case err != nil:
		return fmt.Errorf("putting archive %s and receipt %s in place: %w", c.out.archive, c.out.receipt, err)
	}
	return nil
}

func (c *creation) archiveError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("writing archive %s: %w", c.out.archive, cause(err))
}

// writeFailedReceipt records a failed run, unless an archive is at the final path: its
// receipt must keep describing it.
func (c *creation) writeFailedReceipt(rc *report.Receipt, stderr io.Writer) {
	if c.cfg.dryRun || c.out.receipt == "" || exists(c.out.archive) {
		return
	}
	data, err := rc.Marshal()
	if err == nil {
		err = atomicfile.WriteFile(c.out.receipt, data, 0o600)
	}
	if err != nil && !c.cfg.quiet {
		fmt.Fprintf(stderr, "backup: could not write receipt %s: %v\n", c.out.receipt, cause(err))
	}
}

func (c *creation) print(rc *report.Receipt, stdout, stderr io.Writer) {
	if c.cfg.json {
		if data, err := rc.Marshal(); err == nil {
			stdout.Write(data)
		}
	}
	if c.cfg.quiet && rc.Status == report.Complete {
		return
	}
	receipt := c.out.receipt
	if c.cfg.dryRun {
		receipt = ""
	}
	report.WriteSummary(stderr, rc, receipt)
}
