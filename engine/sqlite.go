package engine

// Snapshot sources: with Options.SQLite a database is stored as a consistent snapshot,
// staged in the staging folder (see stagingDir), never as its raw bytes.

import (
	"context"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"backup/archive"
	"backup/atomicfile"
	"backup/format"
	"backup/skiprules"
	"backup/sqlitesnap"
	"backup/walker"
)

// RuleSidecar excludes the -wal, -shm and -journal files of a database stored as a
// snapshot: a fresh snapshot restored next to a stale WAL would be torn.
const RuleSidecar = "sqlite-sidecar"

// staging is the folder snapshots are staged in, as the walk may meet it inside a SOURCE.
type staging struct {
	dir  fs.FileInfo // nil: not known (no snapshots, or a dry run)
	name string      // its stored name, once the walk met it
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

// snapshotOpener returns the archive's Open hook for Options.SQLite: a regular file that
// begins like an SQLite database is replaced by a snapshot staged in dir; any other file is
// handed on as opened. A database that cannot be snapshotted is an OpError
// (format.OpSnapshot), never its raw bytes.
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

// isSidecar reports whether the regular file en is the -wal, -shm or -journal of a database
// beside it that the run archives (so as a snapshot). A database always comes first in the
// walk, its name being a prefix of its sidecars'.
func (e *Engine) isSidecar(en walker.Entry) bool {
	if !e.opts.SQLite || en.Rel == "" {
		return false
	}
	db, ok := sqlitesnap.DatabaseOf(path.Base(en.Rel))
	if !ok {
		return false
	}
	f, err := en.OpenSibling(db)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !isDatabase(f) {
		return false
	}
	rel := path.Join(path.Dir(en.Rel), db)
	return e.rules.Decide(nil, rel, info, en.RootDev).Action == skiprules.Archive
}

// dryRunSnapshot records, in a dry run, that the file en would be stored as a snapshot.
func (e *Engine) dryRunSnapshot(en walker.Entry) {
	if !e.opts.SQLite {
		return
	}
	h := en.Hold()
	defer h.Release()
	f, err := h.OpenRaw()
	if err != nil {
		return
	}
	defer f.Close()
	if isDatabase(f) {
		e.Hooks.Copy(en.Name, format.CopySource{Kind: sqlitesnap.Kind, Size: en.Info.Size(), ModTime: en.Info.ModTime()})
		e.wouldSnapshot = append(e.wouldSnapshot, format.WouldCopy{Path: en.Name, Kind: sqlitesnap.Kind})
	}
}

// reusable says whether the dry run's file en would be copied from the reference.
func (e *Engine) reusable(en walker.Entry) bool {
	if !e.ref.Unchanged(en.Name, en.Info) {
		return false
	}
	h := en.Hold()
	defer h.Release()
	return !e.fresh(h, en.Name)
}

// fresh says whether the file src, unchanged since the reference, must be read all the
// same: a database is snapshotted again every run, since its -wal may hold commits the
// unchanged main file does not show. The archive's workers ask it, several at once.
func (e *Engine) fresh(src walker.Handle, _ string) bool {
	if !e.opts.SQLite || e.ref.LookedForDatabases() {
		return false
	}
	f, err := src.OpenRaw()
	if err != nil {
		return true // reading it will say what is wrong
	}
	defer f.Close()
	return isDatabase(f)
}

// isStaging reports whether en is a file this run stages in its staging folder (a snapshot
// being taken): never archived, like the archive's own temp file.
func (e *Engine) isStaging(en walker.Entry) bool {
	if e.stage.dir == nil || en.Rel == "" || !strings.HasPrefix(path.Base(en.Rel), atomicfile.SpoolPrefix) {
		return false
	}
	return path.Dir(en.Name) == e.stage.name
}

// noteStaging remembers the stored name of the staging folder when the walk meets it.
func (e *Engine) noteStaging(en walker.Entry) {
	if e.stage.dir != nil && walker.SameFile(e.stage.dir, en.Info) {
		e.stage.name = en.Name
	}
}
