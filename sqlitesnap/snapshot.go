package sqlitesnap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"backup/eintr"
)

// DefaultTimeout is how long a snapshot waits for a database that a writer holds locked.
const DefaultTimeout = 10 * time.Second

// Kind names what a snapshot is a snapshot of, as the manifest records it.
const Kind = "sqlite"

// errReplaced is the cause when the database's name no longer leads to the file the walk
// opened: SQLite, which opens by name, would have copied another file.
var errReplaced = errors.New("replaced while it was copied (its name leads to another file)")

// errSidecarReplaced is the cause when a sidecar of the database became a FIFO while SQLite
// copied it: what SQLite read from it is not the database's.
var errSidecarReplaced = errors.New("a -journal, -wal or -shm beside it became a FIFO while it was copied")

// Options configure Take.
type Options struct {
	// Dir is the folder the copy is staged in: the output folder, which has room for the
	// archive, where a small /tmp may not; $TMPDIR for an archive streamed elsewhere.
	Dir string
	// Timeout bounds the wait for a lock a writer holds; 0 means DefaultTimeout.
	Timeout time.Duration
	// beforeOpen runs just before SQLite opens the database; tests swap the file here.
	beforeOpen func()
	// hotCopied runs once a database with a hot journal and its journal are copied (see
	// copyHot); tests change them here.
	hotCopied func()
	// immutableRead runs once a database read as immutable is copied, or failed to be (see
	// copyImmutable); tests change it here.
	immutableRead func()
	// backedUp runs once the online backup is done, before the file SQLite read is checked
	// (see backupInto); tests lock the database here.
	backedUp func()
}

// Source is a database file as the walk opened it.
type Source struct {
	// File is the database, opened without following links and checked to be a regular file.
	File *os.File
	// Dir is a path to the folder holding it that resolves through the walk's open
	// descriptor of that folder (/proc/self/fd/N).
	Dir string
	// Name is the database's name in Dir.
	Name string
}

func (s Source) path() string { return s.Dir + "/" + s.Name }

// Snapshot is a consistent copy of a database: an open file whose name is already removed,
// read from its start.
type Snapshot struct {
	*os.File
	// Source is the database file's fstat as the copy began.
	Source fs.FileInfo
}

// Take copies the database src with the online backup API, in one step from a read-only
// connection, into a file staged in opts.Dir, and checks the copy with PRAGMA quick_check.
// It returns the copy open and unlinked, or an error with nothing left in opts.Dir but, when
// the copy's name could not be removed, that name, emptied.
func Take(ctx context.Context, src Source, opts Options) (*Snapshot, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if err := guardVFS(); err != nil {
		return nil, err
	}
	info, err := src.File.Stat()
	if err != nil {
		return nil, err
	}
	done := startReading(src.File)
	snap, err := takeStaged(ctx, src, info, opts)
	done()
	if err != nil && isNotExist(err) {
		if _, lerr := os.Lstat(src.path()); lerr == nil {
			// What is gone is not the database (its name still leads somewhere): the staging
			// folder, or the copy staged there. Said as not-exist, the database would be taken
			// for one that vanished meanwhile: not lost, the run complete without it.
			err = stagingGone{err}
		}
	}
	return snap, err
}

// stagingGone is an error that says something is gone, about the staging folder or the
// copy, not the database: its text is err's, but it is not fs.ErrNotExist.
type stagingGone struct{ err error }

func (e stagingGone) Error() string { return e.err.Error() }

// takeStaged is Take with its options set.
func takeStaged(ctx context.Context, src Source, info fs.FileInfo, opts Options) (*Snapshot, error) {
	if err := checkStageDir(opts.Dir); err != nil {
		return nil, err
	}
	// The copy's name goes even on a process's forced exit (a second SIGINT): it may hold
	// what an encrypted archive must not leave in clear.
	stage, forget, err := stageFile(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("staging the copy: %w", err)
	}
	defer forget()
	defer stage.Close() // the lock goes once the name is gone
	// SQLite may write this copy, and nothing else (see guardedOpen).
	staged.Store(filepath.Base(stage.Name()), struct{}{})
	defer staged.Delete(filepath.Base(stage.Name()))
	snap, err := take(ctx, src, info, stage.Name(), opts)
	// The copy is open by then, if it was made: its name can go on every path.
	if rmErr := removeStaged(stage.Name()); rmErr != nil {
		// The name would keep the whole database (plaintext, for an encrypted archive, in
		// $TMPDIR) until some later run's sweep: its bytes go instead, and with them the
		// snapshot, which reads the same file.
		stage.Truncate(0)
		if snap != nil {
			snap.Close()
		}
		if err == nil {
			err = fmt.Errorf("removing the staged copy %s (emptied instead): %w", stage.Name(), rmErr)
		}
		return nil, err
	}
	return snap, err
}

func take(ctx context.Context, src Source, info fs.FileInfo, stage string, opts Options) (*Snapshot, error) {
	if err := checkSame(src, info); err != nil {
		return nil, err
	}
	if err := checkSidecars(src); err != nil {
		return nil, err
	}
	if opts.beforeOpen != nil {
		opts.beforeOpen()
	}
	stop := watchFIFOs(src)
	err := copyDatabase(ctx, src, stage, opts)
	if stop() { // whatever SQLite made of it
		err = errSidecarReplaced
	}
	if err != nil && checkSame(src, info) != nil {
		err = errReplaced // what SQLite could not open was not the walk's file (a FIFO, say)
	}
	if err != nil {
		return nil, err
	}
	if err := checkSame(src, info); err != nil {
		return nil, err
	}
	if err := quickCheck(ctx, stage, checkBudget(info.Size(), opts.Timeout)); err != nil {
		return nil, err
	}
	f, err := os.Open(stage)
	if err != nil {
		return nil, fmt.Errorf("staged copy: %w", err)
	}
	return &Snapshot{File: f, Source: info}, nil
}

// checkSame checks that src's name leads to the file the walk opened, not to a link or
// another file swapped in since.
func checkSame(src Source, info fs.FileInfo) error {
	got, err := os.Lstat(src.path())
	if err != nil {
		return err
	}
	if !got.Mode().IsRegular() || !os.SameFile(got, info) {
		return errReplaced
	}
	return nil
}

// checkOpened checks that the name SQLite opened the database by leads to the walk's file
// in the walk's folder. SQLite resolves the /proc/self/fd/N path it is given to the
// folder's name, and opens the database (and later its -journal or -wal) by that name: a
// folder swapped in between (for a symlink to another folder) leads it to another
// database, which checkSame, looking through the walk's descriptor, would not see.
func checkOpened(src Source, opened string) error {
	if opened == "" {
		return errReplaced
	}
	file, err := os.Lstat(opened)
	if err != nil {
		return errReplaced
	}
	dir, err := os.Stat(filepath.Dir(opened))
	if err != nil {
		return errReplaced
	}
	walkFile, err := src.File.Stat()
	if err != nil {
		return err
	}
	walkDir, err := os.Stat(src.Dir)
	if err != nil {
		return err
	}
	if !os.SameFile(file, walkFile) || !os.SameFile(dir, walkDir) {
		return errReplaced
	}
	return nil
}

// removeStaged removes the staged copy and the files SQLite may have made beside it, and
// says why the copy's own name could not go. A sidecar left (SQLite removes its own before
// the copy is done) is a .backup-spool-* file, which a backup set's next run removes
// (Sweep, in $TMPDIR).
func removeStaged(name string) error {
	err := eintr.Unlink(name)
	if isNotExist(err) {
		err = nil
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		eintr.Remove(name + suffix)
	}
	return err
}

// isNotExist reports whether err says a path does not exist, from os or from a syscall.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOENT)
}

// noSidecar reports whether err, from looking up a sidecar's name (NAME-wal, NAME-shm,
// NAME-journal), says there is none: also when that name is too long to exist, as beside a
// database whose own name is as long as a name may be, which SQLite treats as absent too.
func noSidecar(err error) bool {
	return isNotExist(err) || errors.Is(err, syscall.ENAMETOOLONG)
}

// uri makes a file: URI of path for SQLite, which decodes %XX in it.
func uri(path string, params ...string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path) + "?" + strings.Join(params, "&")
}
