package main

// How create builds the engine from its flags and hangs the Recorder and the progress line
// on the engine's hooks, as restic's runBackup hangs its reporter on the archiver.

import (
	"context"
	"io"
	"os"

	"backup/engine"
	"backup/format"
	"backup/report"
	"backup/skiprules"
)

// beforeVerify is a test hook: it sees the closed temp archive before --verify reads it.
var beforeVerify = func(tempPath string) {}

// engineOptions are the engine's options for this run, reading unchanged files' entries from
// the archive at reference ("" for none). The Output is the target's, once opened.
func (c *creation) engineOptions(reference string) engine.Options {
	cfg := c.cfg
	opts := engine.Options{
		Sources:          cfg.sources,
		Rules:            cfg.rules,
		Method:           cfg.method,
		Level:            cfg.level,
		Jobs:             cfg.jobs,
		Xattrs:           cfg.xattrs,
		SQLite:           cfg.sqlite,
		SQLiteTimeout:    cfg.sqliteTimeout,
		Reference:        reference,
		ReferenceReceipt: c.refReceipt,
		// Without --reference a set run copies from LATEST, which its run read back.
		ReferenceReadBack: cfg.reuse.reference == "",
		Reuse:             cfg.reuse.opts,
		Pick:              c.pick.names,
		Created:           c.pick.created,
		Replaced:          c.pick.replaced,
		DryRun:            cfg.dryRun,
		Verify:            cfg.verify,
		BeforeVerify:      beforeVerify,
		Recipients:        cfg.recipients,
		Identities:        cfg.identities,
	}
	// What the run prints (--json, --json-lines; -o - is the engine's), redirected into a
	// file inside a SOURCE, is its output as the receipt is: never archived (rule self).
	if out, ok := stdoutFile(c.stdout, cfg.stdoutWhat()); ok {
		opts.Rules.Self = append(opts.Rules.Self, out.Info)
	}
	if !cfg.dryRun {
		// The run's own outputs, as an earlier run left them inside a SOURCE, are being
		// replaced: never archived (rule self). A bucket's receipt is no local file.
		if cfg.metricsFile != "" {
			leaveOut(&opts.Rules, cfg.metricsFile)
		}
		if _, remote := c.target.(*uploadTarget); !remote {
			leaveOut(&opts.Rules, c.paths().receipt)
		}
		if set := cfg.set; set != nil && set.cache != nil {
			leaveOut(&opts.Rules, set.cache.root) // the whole cache: copies of archives
		}
		if set := cfg.set; set != nil && set.local() {
			// The whole set: its earlier backups, each holding the ones before it, would
			// make every archive larger than all of them together. (A set that is a SOURCE
			// itself is refused: checkSetNotSource.)
			if info, err := os.Stat(set.dir); err == nil { // the folder, through a symlink too
				opts.Rules.Self = append(opts.Rules.Self, info)
			}
		}
	}
	return opts
}

// isSource says whether dir is one of the sources (a SOURCE that is a symlink is followed).
func isSource(sources []engine.Source, dir string) bool {
	d, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, src := range sources {
		if s, err := os.Stat(src.Path); err == nil && os.SameFile(s, d) {
			return true
		}
	}
	return false
}

// leaveOut adds the file at path, when there is one, to the files rules never archive.
func leaveOut(rules *skiprules.Rules, path string) {
	if info, err := os.Lstat(path); err == nil {
		rules.Self = append(rules.Self, info)
	}
}

// reporter hangs the run's Recorder, the "reading every file" line and the progress line on
// the engine's hooks.
func (c *creation) reporter(ctx context.Context, e *engine.Engine, stderr io.Writer) engine.Hooks {
	return engine.Hooks{
		File:     c.rec.File,
		Dir:      c.rec.Dir,
		Symlink:  c.rec.Symlink,
		Copy:     c.rec.Copy,
		Skip:     c.rec.Skip,
		Exclude:  c.rec.Exclude,
		Warn:     c.rec.Warn,
		Expect:   c.rec.Expect,
		NoReuse:  func(err error) { c.fullRun(stderr, err) },
		Walking:  func() func() { return c.startProgress(ctx, e, stderr).Stop },
		Manifest: func() *format.Manifest { return c.rec.Manifest(version) },
	}
}

// startProgress starts the progress line when stderr is a terminal or --progress always
// says so, and the progress events of --json-lines; with neither it returns nil, on which
// Progress's methods do nothing. The totals come from the engine's Count, a walk of its own
// that only stats, and runs only when progress is shown.
func (c *creation) startProgress(ctx context.Context, e *engine.Engine, stderr io.Writer) *report.Progress {
	show := c.cfg.progress == "always"
	if c.cfg.progress == "auto" && !c.cfg.quiet && !c.cfg.verbose {
		show = isTerminal(stderr)
	}
	opts := report.ProgressOptions{Events: c.events, Poll: e.Progress}
	if show {
		opts.Bar = stderr
	}
	if opts.Bar == nil && opts.Events == nil {
		return nil
	}
	p := report.StartProgress(opts)
	go func() {
		if files, bytes, err := e.Count(ctx); err == nil {
			p.SetTotal(files, bytes)
		}
	}()
	return p
}
