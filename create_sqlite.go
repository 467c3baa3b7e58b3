package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"backup/archive"
	"backup/atomicfile"
	"backup/format"
	"backup/skiprules"
	"backup/sqlitesnap"
	"backup/walker"
)

// ruleSidecar excludes the -wal, -shm and -journal files of a database stored as a
// snapshot: a fresh snapshot restored next to a stale WAL would be torn.
const ruleSidecar = "sqlite-sidecar"

// sqliteFlags are create's flags for live SQLite databases.
type sqliteFlags struct {
	mode    string
	timeout durationFlag
}

func addSQLiteFlags(flags *pflag.FlagSet) *sqliteFlags {
	f := &sqliteFlags{timeout: durationFlag(sqlitesnap.DefaultTimeout)}
	flags.StringVar(&f.mode, "sqlite", "auto", "store SQLite databases as consistent snapshots (`MODE` auto) or as their bytes (off)")
	flags.Var(&f.timeout, "sqlite-timeout", "wait up to `DURATION` for a database a writer holds locked; then it is lost")
	return f
}

// validate sets cfg's SQLite settings, or says why the flags are wrong.
func (f *sqliteFlags) validate(cfg *createConfig) error {
	switch f.mode {
	case "auto":
		cfg.sqlite = true
	case "off":
	default:
		return fmt.Errorf("--sqlite %q: must be auto or off", f.mode)
	}
	if f.timeout <= 0 {
		return fmt.Errorf("--sqlite-timeout %v: must be more than 0", time.Duration(f.timeout))
	}
	cfg.sqliteTimeout = time.Duration(f.timeout)
	return nil
}

// snapshotFile is a database's snapshot as the archive reads it: the snapshot's bytes under
// the database's mode and mtime.
type snapshotFile struct {
	*sqlitesnap.Snapshot
	size int64
}

// snapshotInfo is the database's fstat with the snapshot's size.
type snapshotInfo struct {
	fs.FileInfo
	size int64
}

func (i snapshotInfo) Size() int64 { return i.size }

func (s snapshotFile) Stat() (fs.FileInfo, error) { return snapshotInfo{s.Source, s.size}, nil }

func (s snapshotFile) CopyOf() format.CopySource {
	return format.CopySource{Kind: sqlitesnap.Kind, Size: s.Source.Size(), ModTime: s.Source.ModTime()}
}

// snapshotOpener returns the archive's Open hook for --sqlite auto: a regular file that
// begins like an SQLite database is replaced by a snapshot staged in dir; any other file is
// handed on as opened. A database that cannot be snapshotted is an OpError (format.OpSnapshot),
// never its raw bytes.
func snapshotOpener(ctx context.Context, dir string, timeout time.Duration) func(walker.Handle, string) (archive.SourceFile, error) {
	return func(h walker.Handle, _ string) (archive.SourceFile, error) {
		f, err := h.OpenRaw()
		if err != nil {
			return nil, err
		}
		info, db := databaseInfo(f)
		if !db {
			// The archive skips what is not a regular file.
			return &statted{File: f, info: info}, nil
		}
		osf := f.OS()
		defer osf.Close()
		src := sqlitesnap.Source{File: osf, Dir: h.Dir(), Name: h.Name()}
		s, err := sqlitesnap.Take(ctx, src, sqlitesnap.Options{Dir: dir, Timeout: timeout})
		if err != nil {
			return nil, &archive.OpError{Op: format.OpSnapshot, Err: err}
		}
		copied, err := s.Stat()
		if err != nil {
			s.Close()
			return nil, &archive.OpError{Op: format.OpSnapshot, Err: err}
		}
		return snapshotFile{s, copied.Size()}, nil
	}
}

// statReaderAt is an open file as isDatabase reads it: an *os.File or a *walker.File.
type statReaderAt interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

// isDatabase reports whether f is a regular file that begins like an SQLite database. Only
// a regular file is read: a device may act on a read. A file that cannot be read is left to
// the archive, which reports the read error.
func isDatabase(f statReaderAt) bool {
	_, db := databaseInfo(f)
	return db
}

// databaseInfo is isDatabase, also returning the fstat it made (nil when it failed).
func databaseInfo(f statReaderAt) (fs.FileInfo, bool) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return info, false
	}
	db, err := sqlitesnap.IsDatabase(f)
	return info, err == nil && db
}

// statted answers the archive's first Stat, the one before reading, with the fstat made to
// look for a database a moment before: a system call per file. Later ones ask again.
type statted struct {
	*walker.File
	info fs.FileInfo
}

func (s *statted) Stat() (fs.FileInfo, error) {
	if info := s.info; info != nil {
		s.info = nil
		return info, nil
	}
	return s.File.Stat()
}

// isSidecar reports whether the regular file e is the -wal, -shm or -journal of a database
// beside it that the run archives (so as a snapshot). A database always comes first in the
// walk, its name being a prefix of its sidecars'.
func (c *creation) isSidecar(e walker.Entry) bool {
	if !c.cfg.sqlite || e.Rel == "" {
		return false
	}
	db, ok := sqlitesnap.DatabaseOf(path.Base(e.Rel))
	if !ok {
		return false
	}
	f, err := e.OpenSibling(db)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !isDatabase(f) {
		return false
	}
	rel := path.Join(path.Dir(e.Rel), db)
	return c.cfg.rules.Decide(nil, rel, info, e.RootDev).Action == skiprules.Archive
}

// dryRunSnapshot records, in a dry run, that the file e would be stored as a snapshot.
func (c *creation) dryRunSnapshot(e walker.Entry) {
	if !c.cfg.sqlite {
		return
	}
	h := e.Hold()
	defer h.Release()
	f, err := h.OpenRaw()
	if err != nil {
		return
	}
	defer f.Close()
	if isDatabase(f) {
		c.rec.Copy(e.Name, format.CopySource{Kind: sqlitesnap.Kind, Size: e.Info.Size(), ModTime: e.Info.ModTime()})
		c.wouldSnapshot = append(c.wouldSnapshot, format.WouldCopy{Path: e.Name, Kind: sqlitesnap.Kind})
	}
}

// reusable says whether the dry run's file e would be copied from the reference.
func (c *creation) reusable(e walker.Entry) bool {
	if !c.ref.Unchanged(e.Name, e.Info) {
		return false
	}
	h := e.Hold()
	defer h.Release()
	return !c.fresh(h, e.Name)
}

// fresh says whether the file src, unchanged since the reference, must be read all the
// same: a database is snapshotted again every run, since its -wal may hold commits the
// unchanged main file does not show.
func (c *creation) fresh(src walker.Handle, _ string) bool {
	if !c.cfg.sqlite {
		return false
	}
	f, err := src.OpenRaw()
	if err != nil {
		return true // reading it will say what is wrong
	}
	defer f.Close()
	return isDatabase(f)
}

// printWouldSnapshot lists, after a dry run's summary, the files it would snapshot.
func (c *creation) printWouldSnapshot(stderr io.Writer) {
	for _, w := range c.wouldSnapshot {
		fmt.Fprintf(stderr, "  would snapshot %s (SQLite)\n", format.QuoteName(w.Path))
	}
}

// isStaging reports whether e is a file this run stages in its staging folder (a snapshot
// being taken): never archived, like the archive's own temp file.
func (c *creation) isStaging(e walker.Entry) bool {
	if c.outDir == nil || e.Rel == "" || !strings.HasPrefix(path.Base(e.Rel), atomicfile.SpoolPrefix) {
		return false
	}
	return path.Dir(e.Name) == c.outDirName
}

// noteOutputDir remembers the stored name of the staging folder when the walk meets it.
func (c *creation) noteOutputDir(e walker.Entry) {
	if c.outDir != nil && walker.SameFile(c.outDir, e.Info) {
		c.outDirName = e.Name
	}
}

// stagingDir is the folder snapshots (and the spilled entries of a streamed archive) are
// staged in: the output folder, which has room for the archive, where a small /tmp may not.
// A streamed archive (-o -, a set in a bucket) has no folder here: it stages in $TMPDIR
// (default /tmp), as README says.
func (c *creation) stagingDir() string {
	if c.remoteSet() != nil || c.cfg.toStdout() {
		return os.TempDir()
	}
	return filepath.Dir(c.out.archive)
}

// stagingDirInfo stats the staging folder dir, so that the walk knows it inside a SOURCE.
func (c *creation) stagingDirInfo(dir string) {
	if info, err := os.Stat(dir); err == nil {
		c.outDir = info
	}
}
