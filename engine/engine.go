package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"backup/archive"
	"backup/format"
	"backup/seal"
	"backup/skiprules"
)

// Source is one tree (or regular file) a run backs up.
type Source struct {
	// Path is where it is; the walk resolves it once, following symlinks (the user named it).
	Path string
	// Name is the name its entries are stored under: Name, Name/sub, ….
	Name string
}

// Options say what a run backs up and how. The zero value of each field is documented with
// it; Sources and, unless DryRun, Output are required.
type Options struct {
	// Sources are walked in order; each must be a directory or a regular file.
	Sources []Source
	// Rules decide what is archived, skipped or excluded. The run adds its own files to
	// Rules.Self (the temp archive, an earlier archive at Output.Path, a regular file that
	// Output.Stream is), never changing the caller's slice.
	Rules skiprules.Rules
	// Method and Level say how files are compressed: "" is deflate; Level 0 stores (see
	// archive.DefaultLevel). Jobs is how many files are read and compressed at once; 0 means
	// one per CPU.
	Method format.Method
	Level  int
	Jobs   int
	// Xattrs records each path's extended attributes (and ACLs) in the manifest.
	Xattrs bool
	// SQLite stores each SQLite database as a consistent snapshot staged beside the archive
	// (for a stream or an encrypted archive, in the system's temp folder), waiting up to
	// SQLiteTimeout for a writer that holds it locked; its -wal, -shm and -journal files
	// are excluded.
	SQLite        bool
	SQLiteTimeout time.Duration
	// Reference is an earlier archive whose entries of unchanged files are copied instead
	// of read again; "" reads every file. It is used only when its receipt and manifest say
	// complete and describe this very file (see openTrusted); else the run reads every file
	// and Hooks.NoReuse says why.
	Reference string
	// ReferenceReceipt, when set, is the receipt the Reference is checked against instead of
	// the one beside it: a local copy of a bucket set's archive, whose receipt is in the
	// bucket (the copy is trusted only when it is byte for byte the archive it describes).
	ReferenceReceipt *format.Receipt
	// ReferenceReadBack says that the Reference was read back whole by the run that made
	// it, before anything trusted it (a set's LATEST): the entries copied from it need not
	// be inflated again by Result.ReadBack, unless its receipt says it was read back as
	// ciphertext only (see readBackWhole). Any other reference's are.
	ReferenceReadBack bool
	Reuse             archive.ReuseOptions
	// Pick, when set, narrows the walk to the stored names it holds (and the folders above
	// them: see Pick), and stores a Source that is a symlink as the link: a restore's
	// before-state, whose roots are names in a destination, not paths a user named. Created
	// and Replaced are recorded in the manifest (format.Manifest.Created and Replaced).
	Pick     map[string]bool
	Created  []format.Created
	Replaced []format.Created
	// DryRun walks and tells the hooks what would be stored; nothing is written.
	DryRun bool
	// Verify reads a file Output's temp archive back, as backup verify would with its
	// receipt, before Run returns: a damaged archive fails the run. A stream is not read back.
	Verify bool
	// BeforeVerify, when set, is handed the temp archive's path before Verify reads it: tests
	// damage it there.
	BeforeVerify func(tempPath string)
	// Output is where the archive goes.
	Output Output
	// Recipients, when set, encrypt the archive to them: the Output gets one age file
	// holding the whole zip, and Result.Sum is that file's size and SHA-256. Plaintext is
	// then staged in $TMPDIR only, never beside the archive (see SQLite).
	Recipients *seal.Recipients
	// Identities decrypt an encrypted Reference, and let Verify and Result.ReadBack check an
	// encrypted archive's contents when one of them is among Recipients; without, an
	// encrypted reference gives a full run, and the read-back checks the ciphertext's size,
	// SHA-256 and age header only (see Result.ReadBackChecks).
	Identities *seal.Identities
}

// Output is where a run writes its archive.
type Output struct {
	// Path is the archive's final path. The archive is written to a temp file beside it,
	// which Result.Commit puts in place. For a Stream, Path only names it in errors.
	Path string
	// Replace lets Commit replace a file at Path; without it Commit fails on one.
	Replace bool
	// Stream, when set, gets the archive's bytes as they are made, front to back (stdout, an
	// upload); what becomes of them is the caller's affair. Entries that wait their turn spill
	// to the system's temp folder.
	Stream io.Writer
}

// Engine is one backup run. Build it with New, hang the reporter on its Hooks, call Run once.
type Engine struct {
	// Hooks are how the run reports what became of each path; see Hooks.
	Hooks Hooks

	opts  Options
	rules skiprules.Rules // opts.Rules and the run's own files
	ref   *archive.Reference
	// refReadBack says that ref was read back whole by the run that made it: its copied
	// entries need not be inflated again (Options.ReferenceReadBack, and see readBackWhole).
	refReadBack bool
	w           *archive.Writer // nil in a dry run
	sealer      *sealer         // an encrypted archive's; nil otherwise
	owners      archive.Owners
	// wouldSnapshot is, in a dry run, the files that would be snapshotted.
	wouldSnapshot []format.WouldCopy
	// dryLinks numbers, in a dry run, the hard-link groups the Writer would.
	dryLinks archive.LinkGroups

	// The progress counters, read from any goroutine.
	files   atomic.Int64
	writer  atomic.Pointer[archive.Writer]
	current atomic.Pointer[string] // the file last handed to the archive
}

// New returns the run opts describe.
func New(opts Options) *Engine {
	e := &Engine{opts: opts, rules: opts.Rules}
	e.rules.Self = slices.Clip(e.rules.Self) // appending must never write into the caller's array
	return e
}

// Run backs up the sources into the Output and returns what it made. A fatal error (a source
// that is not there, an archive that cannot be written, ctx done) is returned with nothing
// left of the archive; problems with single paths go to Hooks.Warn and the run goes on. A
// file Output's archive is left at its temp path for the caller to Commit (or Abort) with
// its receipt; ctx is checked once more when the archive is whole, so an interrupt is never
// taken for a finished run.
func (e *Engine) Run(ctx context.Context) (*Result, error) {
	e.Hooks.fill()
	if !e.opts.DryRun && e.Hooks.Manifest == nil {
		return nil, errors.New("engine: a run that writes an archive needs Hooks.Manifest")
	}
	if err := CheckSources(e.opts.Sources); err != nil {
		return nil, err
	}
	if err := e.openReference(ctx); err != nil {
		return nil, err
	}
	defer e.closeReference()
	if e.opts.DryRun {
		if err := e.walk(ctx); err != nil {
			return nil, err
		}
		return &Result{WouldSnapshot: e.wouldSnapshot}, nil
	}
	if err := e.open(ctx); err != nil {
		return nil, err
	}
	res, err := e.write(ctx)
	if err != nil {
		e.w.Abort()
		e.sealer.abort()
		return nil, err
	}
	return res, nil
}

// errNotSource is why a SOURCE that is neither a directory nor a regular file fails the run.
var errNotSource = errors.New("not a directory or a regular file")

// CheckSources says why a source cannot be backed up (it is not there, or neither a
// directory nor a regular file), or nil. Run checks them first; a caller may check them
// earlier, before it does anything else.
func CheckSources(sources []Source) error {
	for _, s := range sources {
		info, err := os.Stat(s.Path)
		if err != nil {
			return fmt.Errorf("source %s: %w", s.Path, cause(err))
		}
		if !info.IsDir() && !info.Mode().IsRegular() {
			return fmt.Errorf("source %s: %w", s.Path, errNotSource)
		}
	}
	return nil
}

// Progress is how far the run has got: files stored, bytes of files read, and the file last
// handed to the archive. Safe to poll from any goroutine at any time; the counters move
// between Hooks.Walking and the function it returned.
func (e *Engine) Progress() (files, bytes int64, current string) {
	if name := e.current.Load(); name != nil {
		current = *name
	}
	if w := e.writer.Load(); w != nil {
		bytes = w.BytesRead()
	}
	return e.files.Load(), bytes, current
}

// cause strips the path from an *fs.PathError whose path the message names already.
func cause(err error) error {
	var se *archive.SpoolError
	if errors.As(err, &se) {
		return se // names the folder that failed, which is not the archive's
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
