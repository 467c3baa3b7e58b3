package main

import (
	"context"
	"io"
	"io/fs"
	"os"

	"golang.org/x/term"

	"backup/report"
	"backup/skiprules"
	"backup/walker"
)

// walk walks every source, telling the Recorder and the Writer what it meets.
func (c *creation) walk(ctx context.Context) error {
	w := walker.Walker{
		Visit: c.visit,
		ReadDirFailed: func(_ walker.Entry, err error) error {
			c.rec.Warn(err)
			return nil
		},
	}
	return walkSources(ctx, w, c.cfg.sources)
}

func walkSources(ctx context.Context, w walker.Walker, sources []source) error {
	for _, s := range sources {
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
	d := c.cfg.rules.Decide(e, e.Rel, e.Info, e.RootDev)
	switch d.Action {
	case skiprules.Skip:
		c.rec.Skip(e.Name, d.Kind)
		return nil
	case skiprules.Exclude:
		c.rec.Exclude(e.Name, d.Rule)
		return fs.SkipDir
	}
	if e.Info.IsDir() {
		c.noteOutputDir(e)
		c.rec.Dir(e.Name)
		if c.w == nil {
			return nil
		}
		return c.w.AddDir(e.Name, e.Info)
	}
	switch {
	case c.isStaging(e):
		c.rec.Exclude(e.Name, skiprules.RuleSelf)
		return nil
	case c.isSidecar(e):
		c.rec.Exclude(e.Name, ruleSidecar)
		return nil
	case c.w == nil:
		c.dryRunSnapshot(e)
		c.rec.File(e.Name, e.Info.Size(), [32]byte{})
		return nil
	}
	return c.w.AddFile(e.Hold(), e.Name, e.Info)
}

// startProgress starts the progress bar when stderr is a terminal or --progress always says
// so; otherwise it returns nil, on which Progress's methods do nothing. The archive's walk
// waits for the compressors, so the total comes from a scan of its own, as restic does: it
// only stats, and runs only when a bar is shown.
func (c *creation) startProgress(ctx context.Context, stderr io.Writer) *report.Progress {
	show := c.cfg.progress == "always"
	if c.cfg.progress == "auto" && !c.cfg.quiet {
		f, ok := stderr.(*os.File)
		show = ok && term.IsTerminal(int(f.Fd()))
	}
	if !show {
		return nil
	}
	p := report.StartProgress(stderr, func() (int64, int64) { return c.w.BytesRead(), c.rec.FilesDone() })
	go func() {
		if total, err := c.scan(ctx); err == nil {
			p.SetTotal(total)
		}
	}()
	return p
}

// scan adds up the sizes of the files the run will archive.
func (c *creation) scan(ctx context.Context) (int64, error) {
	var total int64
	w := walker.Walker{Visit: func(e walker.Entry) error {
		if e.Info == nil {
			return nil
		}
		d := c.cfg.rules.Decide(e, e.Rel, e.Info, e.RootDev)
		switch {
		case d.Action == skiprules.Exclude:
			return fs.SkipDir
		case d.Action == skiprules.Archive && e.Info.Mode().IsRegular():
			total += e.Info.Size()
		}
		return nil
	}}
	err := walkSources(ctx, w, c.cfg.sources)
	return total, err
}
