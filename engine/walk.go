package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"backup/archive"
	"backup/format"
	"backup/skiprules"
	"backup/walker"
)

// walk walks every source, telling the hooks and the archive's Writer what it meets.
func (e *Engine) walk(ctx context.Context) error {
	w := walker.Walker{
		Visit: e.visit,
		ReadDirFailed: func(_ walker.Entry, err error) error {
			e.Hooks.Warn(err)
			return nil
		},
		// A before-state's roots are names in DEST, not paths the user named: a symlink
		// there is saved as the link, never read through.
		NoFollowRoot: e.opts.Pick != nil,
	}
	return walkSources(ctx, w, e.opts.Sources)
}

func walkSources(ctx context.Context, w walker.Walker, sources []Source) error {
	for _, s := range sources {
		err := w.Walk(ctx, s.Path, s.Name)
		if errors.Is(err, errNotSource) {
			return fmt.Errorf("source %s: %w", s.Path, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// visit decides what becomes of the path e: the rules first, then what the run writes
// itself (staged snapshots, a database's sidecars), then by its type.
func (e *Engine) visit(en walker.Entry) error {
	if e.opts.Pick != nil && !e.opts.Pick[en.Name] {
		if en.Info != nil && en.Info.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if en.Err != nil && en.Info == nil && errors.Is(en.Err, fs.ErrNotExist) {
		// A rollback-journal database's -journal comes and goes with each commit. One the
		// walk lists and then finds gone would have been left out had it stayed: a warning
		// for it would fail a run under --fail-on vanished that lost nothing.
		if sidecar, err := e.isSidecar(en); err == nil && sidecar {
			e.Hooks.Exclude(en.Name, RuleSidecar)
			return nil
		}
	}
	if en.Err != nil {
		e.Hooks.Warn(en.Err)
	}
	if en.Info == nil {
		return nil
	}
	if en.Rel == "" && e.opts.Pick == nil && !en.Info.IsDir() && !en.Info.Mode().IsRegular() {
		// CheckSources saw a directory or a regular file at the path; this is what is there
		// now (swapped for a FIFO or a symlink since). Skipped, it would leave a run that
		// stored nothing of the SOURCE complete.
		return errNotSource
	}
	d := e.rules.Decide(en, en.Rel, en.Info, en.RootDev)
	switch d.Action {
	case skiprules.Skip:
		e.Hooks.Skip(en.Name, d.Kind)
		return nil
	case skiprules.Exclude:
		e.Hooks.Exclude(en.Name, d.Rule)
		return fs.SkipDir
	}
	if en.Info.IsDir() {
		return e.addDir(en)
	}
	if isSpool(en) {
		e.Hooks.Exclude(en.Name, skiprules.RuleSelf)
		return nil
	}
	if isRunTemp(en) {
		e.Hooks.Exclude(en.Name, RuleRunTemp)
		return nil
	}
	switch sidecar, err := e.isSidecar(en); {
	case err != nil:
		// Neither stored (it may be the stale -wal of a snapshot) nor left out in silence.
		e.Hooks.Warn(&fs.PathError{Op: format.OpRead, Path: en.Name, Err: err})
		return nil
	case sidecar:
		e.Hooks.Exclude(en.Name, RuleSidecar)
		return nil
	}
	return e.addFile(en)
}

// addFile stores the file or symlink en, or in a dry run records it.
func (e *Engine) addFile(en walker.Entry) error {
	meta := e.meta(en)
	switch {
	case en.Info.Mode()&fs.ModeSymlink != 0:
		return e.addSymlink(en, meta)
	case e.w == nil:
		e.dryRunSnapshot(en)
		e.Hooks.File(format.File{Path: en.Name, Size: en.Info.Size(), Meta: meta, Reused: e.reusable(en), Link: e.dryRunLink(en, meta)})
		return nil
	}
	e.current.Store(&en.Name)
	return e.w.AddFile(en.Hold(), en.Name, en.Info, meta)
}

// addDir stores the directory en, or in a dry run records it.
func (e *Engine) addDir(en walker.Entry) error {
	meta := e.meta(en)
	if e.w == nil {
		e.Hooks.Dir(format.Dir{Path: en.Name, Meta: *meta})
		return nil
	}
	return e.w.AddDir(en.Name, en.Info, meta)
}

// addSymlink stores the symlink en (rules said store), or records why it could not: a link
// that cannot be read is lost, like a file.
func (e *Engine) addSymlink(en walker.Entry, meta *format.Meta) error {
	target, err := en.Readlink()
	switch {
	case err != nil:
		e.Hooks.Warn(err)
	case e.w == nil:
		e.Hooks.Symlink(format.Symlink{Path: en.Name, Target: target, Meta: *meta})
	default:
		return e.w.AddSymlink(en.Name, en.Info, target, meta)
	}
	return nil
}

// meta is what the manifest records of en beside its data: owner numbers and names, and with
// Xattrs its extended attributes. Attributes that cannot be read are lost, as data are.
func (e *Engine) meta(en walker.Entry) *format.Meta {
	m := archive.OwnerOf(en.Info)
	if en.Info.Mode().IsRegular() {
		m = archive.FileMetaOf(en.Info)
	}
	e.owners.Name(&m)
	if e.opts.Xattrs {
		attrs, err := en.Xattrs()
		if err != nil {
			e.Hooks.Warn(err)
		}
		m.Xattrs = attrs
	}
	return &m
}

// Count walks the sources as the run will, only stat-ing, and counts the files it would
// archive and their sizes: the totals of a progress line (the run's own walk waits for the
// compressors, so it cannot run ahead to count, as restic's scanner does not). It may run
// beside Run, on any goroutine: start it from Hooks.Walking.
func (e *Engine) Count(ctx context.Context) (files, bytes int64, err error) {
	w := walker.Walker{Visit: func(en walker.Entry) error {
		if en.Info == nil {
			return nil
		}
		d := e.rules.Decide(en, en.Rel, en.Info, en.RootDev)
		switch {
		case d.Action == skiprules.Exclude:
			return fs.SkipDir
		case d.Action == skiprules.Archive && en.Info.Mode().IsRegular():
			files++
			bytes += en.Info.Size()
		}
		return nil
	}}
	err = walkSources(ctx, w, e.opts.Sources)
	return files, bytes, err
}

// dryRunLink returns the hard-link group the Writer would give en, so that a dry run counts
// the groups the run would store.
func (e *Engine) dryRunLink(en walker.Entry, meta *format.Meta) int {
	if meta == nil {
		return 0
	}
	return e.dryLinks.Of(en.Info)
}
