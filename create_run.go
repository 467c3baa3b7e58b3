package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"backup/archive"
	"backup/report"
	"backup/skiprules"
	"backup/walker"
)

// errInterrupted is the fatal error of a run stopped by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// creation is one run of backup create.
type creation struct {
	cfg     createConfig
	rec     *report.Recorder
	started time.Time
	out     outputPaths
	w       *archive.Writer // nil in a dry run
	total   atomic.Int64    // bytes of the files queued, for the progress bar
}

func createBackup(cfg createConfig, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &creation{cfg: cfg, rec: report.NewRecorder(cfg.policy), started: time.Now()}
	rc, err := c.run(ctx, stderr)
	if err != nil {
		if ctx.Err() != nil {
			err = errInterrupted
		}
		rc = c.receipt(nil, err)
		c.writeFailedReceipt(rc, stderr)
	}
	c.print(rc, stdout, stderr)
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
		Level:  c.cfg.level,
		Jobs:   c.cfg.jobs,
		OnFile: c.rec.File,
		OnSkip: c.rec.Skip,
		OnWarn: c.rec.Warn,
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
	p := c.startProgress(stderr)
	err := c.walk(ctx)
	p.SetTotal(c.total.Load())
	if err == nil {
		err = c.w.Wait()
	}
	p.Stop()
	if err != nil {
		return nil, c.archiveError(err)
	}
	manifest, err := archive.MarshalManifest(c.rec.Manifest(version))
	if err != nil {
		return nil, err
	}
	sum, err := c.w.Close(manifest)
	if err != nil {
		return nil, c.archiveError(err)
	}
	rc := c.receipt(&report.ArchiveInfo{Path: c.out.archive, Size: sum.Size, SHA256: sum.SHA256}, nil)
	return rc, c.place(rc)
}

func (c *creation) place(rc *report.Receipt) error {
	data, err := rc.Marshal()
	if err != nil {
		return err
	}
	staged, err := archive.StageFile(c.out.receipt, data, 0o600)
	if err != nil {
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	if err := c.w.Commit(c.out.archive, c.cfg.force); err != nil {
		staged.Discard()
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("output %s exists (use --force to replace it)", c.out.archive)
		}
		return c.archiveError(err)
	}
	if err := staged.Commit(); err != nil {
		return fmt.Errorf("writing receipt %s: %w", c.out.receipt, cause(err))
	}
	return nil
}

func (c *creation) archiveError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("writing archive %s: %w", c.out.archive, cause(err))
}

// startProgress starts the progress bar when stderr is a terminal or --progress always says
// so; otherwise it returns nil, on which Progress's methods do nothing.
func (c *creation) startProgress(stderr io.Writer) *report.Progress {
	show := c.cfg.progress == "always"
	if c.cfg.progress == "auto" && !c.cfg.quiet {
		f, ok := stderr.(*os.File)
		show = ok && term.IsTerminal(int(f.Fd()))
	}
	if !show {
		return nil
	}
	return report.StartProgress(stderr, func() (int64, int64) { return c.w.BytesRead(), c.rec.FilesDone() })
}

// walk walks every source, telling the Recorder and the Writer what it meets.
func (c *creation) walk(ctx context.Context) error {
	w := walker.Walker{
		Visit: c.visit,
		ReadDirFailed: func(_ walker.Entry, err error) error {
			c.rec.Warn(err)
			return nil
		},
	}
	for _, s := range c.cfg.sources {
		if err := w.Walk(ctx, s.path, s.name); err != nil {
			return err
		}
	}
	return nil
}

func (c *creation) visit(e walker.Entry) error {
	if e.Err != nil {
		c.rec.Warn(e.Err)
	}
	if e.Info == nil {
		return nil
	}
	d := c.cfg.rules.Decide(e.Path, e.Rel, e.Info, e.RootDev)
	switch d.Action {
	case skiprules.Skip:
		c.rec.Skip(e.Name, d.Kind)
		return nil
	case skiprules.Exclude:
		c.rec.Exclude(e.Name, d.Rule)
		return fs.SkipDir
	}
	if e.Info.IsDir() {
		c.rec.Dir(e.Name)
		if c.w == nil {
			return nil
		}
		return c.w.AddDir(e.Name, e.Info)
	}
	c.total.Add(e.Info.Size())
	if c.w == nil {
		c.rec.File(e.Name, e.Info.Size(), [32]byte{})
		return nil
	}
	return c.w.AddFile(e.Path, e.Name, e.Info)
}

// writeFailedReceipt records a failed run, unless an archive is at the final path: its
// receipt must keep describing it.
func (c *creation) writeFailedReceipt(rc *report.Receipt, stderr io.Writer) {
	if c.cfg.dryRun || c.out.receipt == "" || exists(c.out.archive) {
		return
	}
	data, err := rc.Marshal()
	if err == nil {
		err = archive.WriteFileAtomic(c.out.receipt, data, 0o600)
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
