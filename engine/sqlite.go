package engine

// Snapshot sources: with Options.SQLite a database is stored as a consistent snapshot,
// staged in the staging folder (see stagingDir), never as its raw bytes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
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
		info, err := f.Stat()
		if err != nil || !info.Mode().IsRegular() {
			// The archive skips what is not a regular file, and reports a failed fstat.
			return &statted{File: f, info: info}, nil
		}
		plain := &statted{File: f, info: info}
		db, err := plain.readHead(info.Size())
		switch {
		case err != nil:
			// Not known to be no database, so not stored raw: lost, and said so.
			sqlitesnap.Close(plain)
			return nil, &archive.OpError{Op: format.OpRead, Err: fmt.Errorf("reading its first bytes to tell an SQLite database: %w", err)}
		case !db:
			return plain, nil
		}
		plain.dropHead()
		osf := f.OS()
		defer sqlitesnap.Close(osf)
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
// a regular file is read: a device may act on a read. An error says it could not be told.
func isDatabase(f statReaderAt) (bool, error) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false, err
	}
	db, err := sqlitesnap.IsDatabase(f)
	if err != nil {
		return false, fmt.Errorf("reading its first bytes to tell an SQLite database: %w", err)
	}
	return db, nil
}

// statted answers the archive's first Stat, the one before reading, with the fstat made to
// look for a database a moment before: a system call per file. Later ones ask again. And
// its first Read gives the bytes read to look (readHead) before reading on.
type statted struct {
	*walker.File
	info fs.FileInfo
	head []byte          // what readHead read that Read has not given yet
	buf  *[headSize]byte // head's buffer, back to heads on Close
	more bool            // the file may hold more than head
}

// headSize is how much of a file the look for a database reads: the whole of most files
// (88% of the bench corpus's), which the archive then takes from it instead of reading them
// again. A small file takes one read(2), where a pread of 16 bytes and a read took two.
const headSize = 4 << 10

var heads = sync.Pool{New: func() any { return new([headSize]byte) }}

// readHead reads the first bytes of the file, of size bytes by its fstat, with read(2), and
// says whether they begin an SQLite database.
func (s *statted) readHead(size int64) (bool, error) {
	want := int(min(size, headSize))
	if want == 0 {
		return false, nil
	}
	s.buf = heads.Get().(*[headSize]byte)
	n, err := io.ReadAtLeast(s.File, s.buf[:want], min(want, sqlitesnap.HeaderLen))
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err // a file that shrank meanwhile is no error: the fstat after says
	}
	s.head, s.more = s.buf[:n], int64(n) < size
	return sqlitesnap.Begins(s.head), nil
}

// Read gives what readHead read first and, in the same call, what follows it, so that a
// file that fits the archive's buffer comes whole from one Read (see archive.fill).
func (s *statted) Read(p []byte) (int, error) {
	if len(s.head) == 0 {
		return s.File.Read(p)
	}
	n := copy(p, s.head)
	s.head = s.head[n:]
	if len(s.head) > 0 || n == len(p) || !s.more {
		return n, nil
	}
	m, err := s.File.Read(p[n:])
	if err == io.EOF {
		err = nil // said by the next Read
	}
	return n + m, err
}

// dropHead gives the head's buffer back.
func (s *statted) dropHead() {
	if s.buf != nil {
		heads.Put(s.buf)
		s.buf, s.head = nil, nil
	}
}

func (s *statted) Close() error {
	s.dropHead()
	return s.File.Close()
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
// walk, its name being a prefix of its sidecars'. An error says that could not be told: the
// database beside it could not be opened or read.
func (e *Engine) isSidecar(en walker.Entry) (bool, error) {
	if !e.opts.SQLite {
		return false, nil
	}
	if en.Rel == "" {
		return e.isSidecarSource(en.Name)
	}
	db, ok := sqlitesnap.DatabaseOf(path.Base(en.Rel))
	if !ok {
		return false, nil
	}
	cannotTell := func(err error) error {
		return fmt.Errorf("checking whether %s beside it is an SQLite database: %w", db, err)
	}
	// The rules first, as the walk asks them: beside a file they exclude, whatever it
	// holds and whether or not it can be read, a -wal is an ordinary file.
	info, err := en.LstatSibling(db)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, cannotTell(err)
	case !info.Mode().IsRegular():
		return false, nil
	case e.rules.Decide(nil, path.Join(path.Dir(en.Rel), db), info, en.RootDev).Action != skiprules.Archive:
		return false, nil
	}
	f, err := en.OpenSibling(db)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, walker.ErrNotRegular) {
		return false, nil // gone, or swapped for what is not a database, since the lstat
	}
	if err != nil {
		return false, cannotTell(err)
	}
	defer sqlitesnap.Close(f) // SQLite may be copying it (see sqlitesnap.Close)
	isDB, err := isDatabase(f)
	if err != nil {
		return false, cannotTell(err)
	}
	return isDB, nil
}

// isSidecarSource reports whether a SOURCE stored as name is the -wal, -shm or -journal of
// a database that another SOURCE is, stored beside it at the archive's top (`app/*` names
// a folder's files one by one): restored together, a -wal read at another instant than the
// snapshot would tear it, as in a folder. Whether that SOURCE is the database is told as
// the walk will: followed if a symlink, a regular file that begins like SQLite, archived by
// the rules. An error says that could not be told (the sidecar is then lost, as in a folder).
func (e *Engine) isSidecarSource(name string) (bool, error) {
	db, ok := sqlitesnap.DatabaseOf(name)
	if !ok {
		return false, nil
	}
	for _, s := range e.opts.Sources {
		if s.Name != db {
			continue
		}
		// Only a regular file is opened (a device may act on an open), and without
		// blocking, should it be swapped for a FIFO meanwhile.
		if info, err := os.Stat(s.Path); err == nil && !info.Mode().IsRegular() {
			return false, nil
		}
		f, err := os.OpenFile(s.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err == nil {
			defer sqlitesnap.Close(f)
			var info fs.FileInfo
			if info, err = f.Stat(); err == nil && e.rules.Decide(nil, "", info, 0).Action != skiprules.Archive {
				return false, nil
			}
		}
		var isDB bool
		if err == nil {
			isDB, err = isDatabase(f)
		}
		if err != nil {
			return false, fmt.Errorf("checking whether %s beside it is an SQLite database: %w", db, err)
		}
		return isDB, nil
	}
	return false, nil
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
	if db, _ := isDatabase(f); db {
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
	defer sqlitesnap.Close(f)
	db, err := isDatabase(f)
	return db || err != nil // read again, a read error is said then
}

// isSpool reports whether en is a file a run of backup stages (a spool of compressed data,
// a snapshot being taken, SQLite's -journal beside it), or one a killed run left: never
// archived, like the archive's own temp file, wherever the walk meets it (in an output
// folder inside a SOURCE; a killed run's, whatever this run's settings). Only a name such a
// run makes counts (isSpoolName), not a user's file that happens to begin the same way.
func isSpool(en walker.Entry) bool {
	return en.Rel != "" && isSpoolName(path.Base(en.Rel))
}

// isSpoolName reports whether name is one that os.CreateTemp makes for a spool or a staged
// snapshot (SpoolPrefix, "sqlite-" for a snapshot, then up to 10 decimal digits), or that of
// a -wal, -shm or -journal beside a staged snapshot.
func isSpoolName(name string) bool {
	if db, ok := sqlitesnap.DatabaseOf(name); ok {
		name = db
	}
	rest, ok := strings.CutPrefix(name, atomicfile.SpoolPrefix)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "sqlite-")
	return len(rest) > 0 && len(rest) <= 10 && strings.Trim(rest, "0123456789") == ""
}
