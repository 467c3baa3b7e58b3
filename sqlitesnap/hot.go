package sqlitesnap

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"backup/eintr"
)

// A rollback-journal database whose writer crashed in the middle of a transaction has a hot
// journal: its file holds some of the transaction's pages, and its -journal the pages they
// replaced. The first connection to open it must roll the journal back, which writes the
// database; a read-only connection cannot, and fails (SQLITE_READONLY_ROLLBACK) until the
// application opens the database again. So the database and its journal are copied as they
// are into the staging folder, checked not to have changed meanwhile, and SQLite rolls the
// copy back there: the snapshot is the database as of its last commit, and the source is
// only read.

// copyHot copies the database src, which has a hot journal, into stage as of its last
// commit. errChanged when the database or its journal changed while they were copied (a
// writer came, and rolled the journal back itself); stage is then empty again, with no
// journal beside it. copied, when set, runs once both are copied.
func copyHot(ctx context.Context, src Source, stage string, copied func()) error {
	journal, err := openRegular(src.path() + "-journal")
	if isNotExist(err) {
		return errChanged // a writer came, and rolled it back already
	}
	if err != nil {
		return fmt.Errorf("its -journal: %w", pathCause(err))
	}
	defer journal.Close()
	err = copyPair(ctx, src, journal, "-journal", stage, copied)
	if err == nil {
		err = checkNoSuperJournal(stage + "-journal")
	}
	if err != nil {
		// The copy's journal is hot: it must not be beside stage when it is written again.
		eintr.Remove(stage + "-journal")
		os.Truncate(stage, 0)
		return err
	}
	return settle(ctx, stage, "-journal", "rolling back the copy of its hot journal")
}

// copyPair copies the database src and its sidecar (its -journal or -wal, opened as
// journal), as they are, to stage and beside it, and checks that neither changed meanwhile
// (errChanged).
func copyPair(ctx context.Context, src Source, journal *os.File, suffix, stage string, copied func()) error {
	dbBefore, jBefore, err := statBoth(src.File, journal)
	if err != nil {
		return err
	}
	if err := copyFile(ctx, stage+suffix, os.O_CREATE|os.O_EXCL, journal); err != nil {
		return err
	}
	if err := copyFile(ctx, stage, os.O_TRUNC, src.File); err != nil {
		return err
	}
	if copied != nil {
		copied()
	}
	dbAfter, jAfter, err := statBoth(src.File, journal)
	if err != nil {
		return err
	}
	if !unchanged(dbBefore, dbAfter) || !unchanged(jBefore, jAfter) || checkSame(Source{Dir: src.Dir, Name: src.Name + suffix}, jBefore) != nil {
		return errChanged
	}
	return nil
}

// errSuperJournal is the cause when a hot journal names a super-journal.
var errSuperJournal = errors.New("its hot journal names a super-journal (a transaction across databases), which SQLite would open by that name, anywhere, to roll it back: not rolled back here")

// journalMagic begins each journal header and ends a super-journal record.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// checkNoSuperJournal fails with errSuperJournal when the staged journal at name ends with a
// super-journal record: the name of a file, written by whoever wrote the journal, that
// SQLite's rollback checks for, opens and reads as a list of journals (blocking for ever on
// a FIFO), and may delete. Such a journal is a crash in the middle of a commit across
// databases, rare enough to fail closed: whether to roll it back at all depends on a file
// elsewhere, which a backup must not go and open. The record is the last 16 bytes' length
// and magic (readSuperJournal in SQLite's pager.c), checked more loosely than SQLite does,
// so that whatever SQLite would take for one is refused.
func checkNoSuperJournal(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() < 16 {
		return nil
	}
	tail := make([]byte, 16)
	if _, err := f.ReadAt(tail, info.Size()-16); err != nil {
		return err
	}
	n := int64(binary.BigEndian.Uint32(tail))
	if bytes.Equal(tail[8:], journalMagic) && n > 0 && n <= info.Size()-16 {
		return errSuperJournal
	}
	return nil
}

// openRegular opens path for reading, without following a symlink or blocking on a FIFO,
// and only when it is a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func statBoth(a, b *os.File) (fs.FileInfo, fs.FileInfo, error) {
	ia, err := a.Stat()
	if err != nil {
		return nil, nil, err
	}
	ib, err := b.Stat()
	return ia, ib, err
}

// unchanged says whether a file's two fstats show the same size, mtime and change time: a
// write with its mtime put back moves the change time. A change time that moves on its own
// (some FUSE file systems) only sends the copy the usual way, with locks.
func unchanged(before, after fs.FileInfo) bool {
	return before.Size() == after.Size() && before.ModTime().Equal(after.ModTime()) && ctime(before) == ctime(after)
}

func ctime(info fs.FileInfo) syscall.Timespec {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim
	}
	return syscall.Timespec{}
}

// copyFile copies all of src, from its start, into the file name in the staging folder;
// Ctrl-C stops it (a database may be large).
func copyFile(ctx context.Context, name string, flag int, src *os.File) error {
	dst, err := eintr.OpenFile(name, syscall.O_WRONLY|flag, 0o600)
	if err != nil {
		return fmt.Errorf("staging the copy: %w", err)
	}
	_, err = io.Copy(dst, ctxReader{ctx, io.NewSectionReader(src, 0, 1<<62)})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("staging the copy: %w", err)
	}
	return nil
}

// settle opens the staged copy read-write, which rolls back its hot journal or recovers
// its -wal (what, in errors) and, at close, checkpoints that -wal into it, and checks that
// the sidecar (suffix) is gone: the copy is then whole in its own file.
func settle(ctx context.Context, stage, suffix, what string) error {
	db, err := sql.Open("sqlite", uri(stage, "mode=rw"))
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	if exists(stage + suffix) {
		return fmt.Errorf("%s: its %s is still there", what, suffix)
	}
	return nil
}

// ctxReader is r, failing with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
