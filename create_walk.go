package main

import (
	"context"
	"io"
	"io/fs"
	"os"

	"golang.org/x/term"

	"backup/archive"
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
	meta := c.meta(e)
	switch {
	case e.Info.IsDir() && c.w == nil:
		c.rec.Dir(archive.Dir{Path: e.Name, Meta: *meta})
	case e.Info.IsDir():
		return c.w.AddDir(e.Name, e.Info, meta)
	case e.Info.Mode()&fs.ModeSymlink != 0:
		return c.addSymlink(e, meta)
	case c.w == nil:
		c.rec.File(archive.File{Path: e.Name, Size: e.Info.Size(), Meta: meta, Reused: c.ref.Unchanged(e.Name, e.Info)})
	default:
		return c.w.AddFile(e.Hold(), e.Name, e.Info, meta)
	}
	return nil
}

// addSymlink stores the symlink e (rules said store), or records why it could not: a link
// that cannot be read is lost, like a file.
func (c *creation) addSymlink(e walker.Entry, meta *archive.Meta) error {
	target, err := e.Readlink()
	switch {
	case err != nil:
		c.rec.Warn(err)
	case c.w == nil:
		c.rec.Symlink(archive.Symlink{Path: e.Name, Target: target, Meta: *meta})
	default:
		return c.w.AddSymlink(e.Name, e.Info, target, meta)
	}
	return nil
}

// meta is what the manifest records of e beside its data: owner numbers and names, and with
// --xattrs its extended attributes. Attributes that cannot be read are lost, as data are.
func (c *creation) meta(e walker.Entry) *archive.Meta {
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
