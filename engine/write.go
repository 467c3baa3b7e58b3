package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"backup/archive"
	"backup/atomicfile"
	"backup/format"
	"backup/seal"
	"backup/sqlitesnap"
)

// Result is what a run made.
type Result struct {
	// Sum is the archive's size and SHA-256, as its bytes were written, and its manifest's
	// SHA-256; zero in a dry run.
	Sum archive.Summary
	// Manifest is the manifest the archive ends with; nil in a dry run.
	Manifest *format.Manifest
	// WouldSnapshot is, in a dry run, the files that would be stored as snapshots, in walk
	// order.
	WouldSnapshot []format.WouldCopy

	w       *archive.Writer // a file Output's: the archive waits at its temp path
	seal    *sealer         // an encrypted file Output's, instead of w
	path    string
	replace bool
	// sealed says the archive is encrypted; ids are the identities that decrypt it, for
	// the read-back (nil when none does).
	sealed bool
	ids    *seal.Identities
	// inflateCopied is !Engine.refReadBack.
	inflateCopied bool
}

// Commit puts a file Output's archive at its Path, with the staged files given (its receipt),
// as one unit (archive.Writer.Commit): either all are in place and synced, or each final
// path holds what it held before. Without Output.Replace a file at Path is never replaced:
// the error then matches fs.ErrExist.
func (r *Result) Commit(with ...*atomicfile.Staged) error {
	if r.seal != nil {
		return r.seal.commit(r.path, r.replace, with, false)
	}
	return r.w.Commit(r.path, r.replace, with...)
}

// CommitLast is Commit with the staged files put in place before the archive, as a backup
// set wants: a crash between the renames leaves a receipt alone, never an archive alone.
func (r *Result) CommitLast(first ...*atomicfile.Staged) error {
	if r.seal != nil {
		return r.seal.commit(r.path, r.replace, first, true)
	}
	return r.w.CommitLast(r.path, r.replace, first...)
}

// Left is, after a Commit that succeeded, why the archive it replaced could not be removed
// (it stays at a temp name, which the error names); nil when it was, or there was none.
func (r *Result) Left() error {
	switch {
	case r.seal != nil && r.seal.staged != nil:
		return r.seal.staged.Left
	case r.w != nil:
		return r.w.Left()
	}
	return nil
}

// Abort removes a file Output's temp archive that is not to be put in place; a no-op after
// Commit, and for a stream or a dry run.
func (r *Result) Abort() {
	if r.w != nil {
		r.w.Abort()
	}
	r.seal.abort()
}

// stagingDir is the folder snapshots (and the spilled entries of a streamed archive) are
// staged in: the output folder, which has room for the archive, where a small /tmp may not.
// A stream has no folder here: it stages in $TMPDIR (default /tmp). So does an encrypted
// archive: what is staged is plaintext, and an output folder may be a network file system,
// where plaintext must never go.
func (e *Engine) stagingDir() string {
	if e.stagesInTemp() {
		return os.TempDir()
	}
	return filepath.Dir(e.opts.Output.Path)
}

// stagesInTemp says whether the run stages in $TMPDIR (see stagingDir).
func (e *Engine) stagesInTemp() bool {
	return e.opts.Output.Stream != nil || e.opts.Recipients != nil
}

// open starts the archive's Writer into the Output.
func (e *Engine) open(ctx context.Context) error {
	dir := e.stagingDir()
	opts := archive.Options{
		Method:    e.opts.Method,
		Level:     e.opts.Level,
		Jobs:      e.opts.Jobs,
		Reference: e.ref,
		OnFile:    e.fileDone,
		OnDir:     e.Hooks.Dir,
		OnSymlink: e.Hooks.Symlink,
		OnCopy:    e.Hooks.Copy,
		OnSkip:    e.Hooks.Skip,
		OnWarn:    e.Hooks.Warn,
		Owners:    &e.owners,
		// The same file systems that make a reference's inodes and change times
		// meaningless make them move under a running walk.
		IgnoreInode: e.opts.Reuse.IgnoreInode,
		IgnoreCtime: e.opts.Reuse.IgnoreCtime,
		Xattrs:      e.opts.Xattrs,
	}
	if e.opts.SQLite {
		if e.stagesInTemp() {
			// No set's clean-up reaches $TMPDIR: the copies that killed runs staged there
			// (plaintext, for an encrypted archive) go now.
			sqlitesnap.Sweep(dir)
		}
		opts.Open = snapshotOpener(ctx, dir, e.opts.SQLiteTimeout)
		// A file unchanged since a reference whose run looked for databases too was found
		// not to be one then (a database's entry is a snapshot, never reused): it is not
		// opened to ask again.
		if e.ref == nil || !e.ref.LookedForDatabases() {
			opts.Fresh = e.fresh
		}
	}
	out := e.opts.Output
	if e.opts.Recipients != nil {
		return e.openSealed(ctx, dir, opts)
	}
	if out.Stream != nil {
		return e.openStream(ctx, dir, opts)
	}
	w, err := archive.Create(ctx, dir, filepath.Base(out.Path), opts)
	if err != nil {
		return fmt.Errorf("creating archive %s: %w", out.Path, cause(err))
	}
	e.setWriter(w)
	// An earlier archive at Path inside a SOURCE is being replaced: never archived.
	e.leaveOut(w.TempPath(), out.Path)
	return nil
}

// openStream starts the archive's Writer into Output.Stream.
func (e *Engine) openStream(ctx context.Context, dir string, opts archive.Options) error {
	out := e.opts.Output
	e.leaveOutStream(out.Stream)
	w, err := archive.CreateStream(ctx, out.Stream, dir, opts)
	if err != nil {
		return fmt.Errorf("creating archive %s: %w", out.Path, err)
	}
	e.setWriter(w)
	return nil
}

// leaveOutStream keeps a Stream that is a regular file out of the archive: redirected into a
// file inside a SOURCE, the archive must not back itself up.
func (e *Engine) leaveOutStream(stream io.Writer) {
	if f, ok := stream.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			e.rules.Self = append(e.rules.Self, info)
		}
	}
}

func (e *Engine) setWriter(w *archive.Writer) {
	e.w = w
	e.writer.Store(w)
}

// leaveOut keeps the files at paths out of the archive (rule self) when they are inside a
// SOURCE.
func (e *Engine) leaveOut(paths ...string) {
	for _, p := range paths {
		if info, err := os.Lstat(p); err == nil {
			e.rules.Self = append(e.rules.Self, info)
		}
	}
}

// fileDone counts a stored file for Progress and tells Hooks.File.
func (e *Engine) fileDone(f format.File) {
	e.files.Add(1)
	e.Hooks.File(f)
}

// write walks into the archive, ends it with its manifest, and with Verify reads it back.
func (e *Engine) write(ctx context.Context) (*Result, error) {
	done := e.Hooks.Walking()
	err := e.walk(ctx)
	if err == nil {
		err = e.w.Wait()
	}
	e.closeReference()
	done()
	if err != nil {
		return nil, e.archiveError(err)
	}
	m := e.Hooks.Manifest()
	m.Created, m.Replaced = e.opts.Created, e.opts.Replaced
	if e.opts.SQLite {
		m.Databases = format.DatabasesSQLite
	}
	sum, err := e.w.CloseManifest(m)
	if err == nil && e.sealer != nil {
		sum.Summary, err = e.sealer.close()
	}
	if err != nil {
		return nil, e.archiveError(err)
	}
	res := &Result{Sum: sum, Manifest: m, path: e.opts.Output.Path, replace: e.opts.Output.Replace, inflateCopied: !e.refReadBack}
	if e.sealer != nil {
		res.sealed, res.seal = true, e.sealer
		if e.opts.Recipients.OpenableBy(e.opts.Identities) {
			res.ids = e.opts.Identities
		}
	}
	if e.opts.Output.Stream == nil {
		if e.sealer == nil {
			res.w = e.w
		}
		if e.opts.Verify {
			if err := e.verify(ctx, res); err != nil {
				return nil, err
			}
		}
	}
	// An interrupt that came while the archive was finished and synced stops the run here,
	// before anything is published: nothing checks for it from here on.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

func (e *Engine) archiveError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, errNotSource) {
		return err
	}
	return fmt.Errorf("writing archive %s: %w", e.opts.Output.Path, cause(err))
}
