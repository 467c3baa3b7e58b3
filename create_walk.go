package main

import (
	"context"
	"io"
	"io/fs"

	"backup/archive"
	"backup/format"
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
		// A before-state's roots are names in DEST, not paths the user named: a symlink
		// there is saved as the link, never read through.
		NoFollowRoot: c.pick != nil,
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
	if c.pick != nil && !c.pick[e.Name] {
		if e.Info != nil && e.Info.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
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
		return c.addDir(e)
	}
	switch {
	case c.isStaging(e):
		c.rec.Exclude(e.Name, skiprules.RuleSelf)
		return nil
	case c.isSidecar(e):
		c.rec.Exclude(e.Name, ruleSidecar)
		return nil
	}
	meta := c.meta(e)
	switch {
	case e.Info.Mode()&fs.ModeSymlink != 0:
		return c.addSymlink(e, meta)
	case c.w == nil:
		c.dryRunSnapshot(e)
		c.rec.File(format.File{Path: e.Name, Size: e.Info.Size(), Meta: meta, Reused: c.reusable(e)})
		return nil
	}
	c.current.Store(&e.Name)
	return c.w.AddFile(e.Hold(), e.Name, e.Info, meta)
}

// addDir stores the directory e, or in a dry run records it.
func (c *creation) addDir(e walker.Entry) error {
	c.noteOutputDir(e)
	meta := c.meta(e)
	if c.w == nil {
		c.rec.Dir(format.Dir{Path: e.Name, Meta: *meta})
		return nil
	}
	return c.w.AddDir(e.Name, e.Info, meta)
}

// addSymlink stores the symlink e (rules said store), or records why it could not: a link
// that cannot be read is lost, like a file.
func (c *creation) addSymlink(e walker.Entry, meta *format.Meta) error {
	target, err := e.Readlink()
	switch {
	case err != nil:
		c.rec.Warn(err)
	case c.w == nil:
		c.rec.Symlink(format.Symlink{Path: e.Name, Target: target, Meta: *meta})
	default:
		return c.w.AddSymlink(e.Name, e.Info, target, meta)
	}
	return nil
}

// meta is what the manifest records of e beside its data: owner numbers and names, and with
// --xattrs its extended attributes. Attributes that cannot be read are lost, as data are.
func (c *creation) meta(e walker.Entry) *format.Meta {
	m := archive.OwnerOf(e.Info)
	if e.Info.Mode().IsRegular() {
		m = archive.FileMetaOf(e.Info)
	}
	c.owners.Name(&m)
	if c.cfg.xattrs {
		attrs, err := e.Xattrs()
		if err != nil {
			c.rec.Warn(err)
		}
		m.Xattrs = attrs
	}
	return &m
}

// startProgress starts the progress line when stderr is a terminal or --progress always
// says so, and the progress events of --json-lines; with neither it returns nil, on which
// Progress's methods do nothing. The archive's walk waits for the compressors, so the totals
// come from a scan of its own, as restic does: it only stats, and runs only when progress
// is shown.
func (c *creation) startProgress(ctx context.Context, stderr io.Writer) *report.Progress {
	show := c.cfg.progress == "always"
	if c.cfg.progress == "auto" && !c.cfg.quiet && !c.cfg.verbose {
		show = isTerminal(stderr)
	}
	opts := report.ProgressOptions{Events: c.events, Poll: c.poll}
	if show {
		opts.Bar = stderr
	}
	if opts.Bar == nil && opts.Events == nil {
		return nil
	}
	p := report.StartProgress(opts)
	go func() {
		if files, bytes, err := c.scan(ctx); err == nil {
			p.SetTotal(files, bytes)
		}
	}()
	return p
}

// poll reads the engine's counters for the progress line.
func (c *creation) poll() (files, bytes int64, current string) {
	if name := c.current.Load(); name != nil {
		current = *name
	}
	return c.rec.FilesDone(), c.w.BytesRead(), current
}

// scan counts the files the run will archive and adds up their sizes.
func (c *creation) scan(ctx context.Context) (files, total int64, err error) {
	w := walker.Walker{Visit: func(e walker.Entry) error {
		if e.Info == nil {
			return nil
		}
		d := c.cfg.rules.Decide(e, e.Rel, e.Info, e.RootDev)
		switch {
		case d.Action == skiprules.Exclude:
			return fs.SkipDir
		case d.Action == skiprules.Archive && e.Info.Mode().IsRegular():
			files++
			total += e.Info.Size()
		}
		return nil
	}}
	err = walkSources(ctx, w, c.cfg.sources)
	return files, total, err
}
