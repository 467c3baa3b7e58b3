package sqlitesnap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A busy copy waits for the lock in SQLite's busy handler up to busyWait at a time, then
// pauses retryPause and tries again, until its timeout: so an interrupted run stops within
// busyWait, not the whole timeout.
const (
	busyWait   = 100 * time.Millisecond
	retryPause = 20 * time.Millisecond
)

// backuper is what modernc's connection offers for the online backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// errChanged is the cause when a database read without locks changed meanwhile.
var errChanged = errors.New("changed while it was read without locks")

// copyDatabase copies src into stage. A WAL database with no commits in a -wal file (none,
// or an empty one: no connection has it open) is read as immutable, without locks: opening
// it read-only the usual way would need write access to its folder and would leave a -wal
// and a -shm beside it. It is checked afterwards not to have changed meanwhile; if it did, a
// writer came, and it is read the usual way. Any other database is read through a read-only
// connection, which waits for a writer's lock up to opts.Timeout; one that a crashed writer
// left with a hot journal, which that connection cannot roll back, is copied with its
// journal and rolled back in the staging folder (see copyHot). A database without a -shm
// but with commits in a -wal (which SQLite reads beside any database, whatever its header
// says) is copied with its -wal and recovered in the staging folder (see copyWithWAL):
// SQLite would need to make a -shm beside it.
//
// A WAL database's last connection, closing, checkpoints its -wal and removes it. SQLite's
// connection here, opened while the -wal was there (waiting for a writer in exclusive
// locking mode, or after a read as immutable that a writer came during), would then make a
// new -wal beside it, which guardedOpen refuses (SQLITE_READONLY_DIRECTORY): the database
// is then read again from the start, as one no connection has open, until opts.Timeout.
// Not when a process holds it locked with no -wal beside this name: it has the file open by
// another name (a hard link), whose -wal this one will never have.
func copyDatabase(ctx context.Context, src Source, stage string, opts Options) error {
	deadline := time.Now().Add(opts.Timeout)
	for {
		err := copyOnce(ctx, src, stage, opts)
		if !isCode(err, sqlite3.SQLITE_READONLY_DIRECTORY) || time.Now().After(deadline) ||
			dbLocked(src) && !exists(src.path()+"-wal") {
			return err
		}
		os.Truncate(stage, 0)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryPause):
		}
	}
}

// copyOnce is one attempt of copyDatabase.
func copyOnce(ctx context.Context, src Source, stage string, opts Options) error {
	timeout := opts.Timeout
	// Read without locks only when no process holds one: a WAL database's writer in
	// exclusive locking mode, which uses no -shm, holds it from its first commit on, and its
	// commits, where file times count whole seconds, may move no size or time of a copy.
	held := dbLocked(src)
	if !held && isWAL(src.File) && walEmpty(src) {
		err := copyImmutable(ctx, src, stage, opts.immutableRead)
		if !errors.Is(err, errChanged) {
			return err
		}
	}
	if !held && !walEmpty(src) && (!exists(src.path()+"-shm") || staleShm(src)) {
		err := copyWithWAL(ctx, src, stage)
		if !errors.Is(err, errChanged) {
			return err
		}
	}
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", min(timeout, busyWait).Milliseconds())
	err := backupInto(ctx, src, uri(src.path(), "mode=ro", busy), stage, timeout, opts.backedUp)
	if isCode(err, sqlite3.SQLITE_READONLY_ROLLBACK) {
		err = copyHot(ctx, src, stage, opts.hotCopied)
		if errors.Is(err, errChanged) { // a writer came and rolled it back: read it as usual
			err = backupInto(ctx, src, uri(src.path(), "mode=ro", busy), stage, timeout, opts.backedUp)
		}
	}
	if isCode(err, sqlite3.SQLITE_CANTOPEN) {
		err = unopenedSidecar(src, err)
	}
	return err
}

// unopenedSidecar names the sidecar of src that this process cannot open for reading, the
// likely cause of SQLite's "unable to open" (a -shm only its owner may read, for a backup
// run as another user), with SQLite's error in the chain; err as it is when all open.
func unopenedSidecar(src Source, err error) error {
	for _, suffix := range sidecarSuffixes {
		f, oerr := openRegular(src.path() + suffix)
		if oerr == nil {
			f.Close()
			continue
		}
		if !noSidecar(oerr) {
			return fmt.Errorf("its %s cannot be read (%w), which SQLite needs to read it: %w", suffix, pathCause(oerr), err)
		}
	}
	return err
}

// pathCause returns err's cause without the *fs.PathError around it. The archive words a
// warning by the innermost *fs.PathError, whose path here is /proc/self/fd/N/...: one left
// in the chain drops the words that name the sidecar ("permission denied" alone, of a
// database the user may read), which is what the error wrapping pathCause's says.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// The lock bytes SQLite's unix VFS locks: in a -shm, the WAL locks and the DMS byte after
// them, on which each connection that uses the -shm keeps a shared lock while it has it
// open; in the database, the pending, reserved and shared bytes, which a writer in
// exclusive locking mode (no -shm) keeps locked.
const (
	shmLocksStart, shmLocksLen = 120, 9
	dbLocksStart, dbLocksLen   = 0x40000000, 512
)

// staleShm reports whether src's -shm is one that no connection has open: no process holds a
// lock on it, nor on the database. SQLite's read-only connection, which may not rebuild such
// a -shm, trusts its index; one ahead of the -wal (a file-level copy that read the -wal
// first) it retries in C for 10 s, past --sqlite-timeout and Ctrl-C, and then fails. The
// application that opens it rebuilds the index from the -wal, as copyWithWAL does.
func staleShm(src Source) bool {
	shm, err := openRegular(src.path() + "-shm")
	if err != nil {
		return false
	}
	// Closed at once: closing a file drops every lock this process holds on it, and none of
	// SQLite's connections here has this one open now.
	defer shm.Close()
	return !lockedByAnother(shm, shmLocksStart, shmLocksLen) && !dbLocked(src)
}

// dbLocked reports whether another process holds a lock on src's database file.
func dbLocked(src Source) bool { return lockedByAnother(src.File, dbLocksStart, dbLocksLen) }

// lockedByAnother reports whether another process holds an fcntl lock on any of the n bytes
// of f from start; true when that cannot be told.
func lockedByAnother(f *os.File, start, n int64) bool {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: start, Len: n}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return true
	}
	return lk.Type != unix.F_UNLCK
}

// copyImmutable copies src read as immutable, and fails with errChanged when its main file
// changed meanwhile or its -wal got commits, whether the copy failed or not; read, when set,
// runs once the copy is done.
func copyImmutable(ctx context.Context, src Source, stage string, read func()) error {
	before, err := src.File.Stat()
	if err != nil {
		return err
	}
	err = backupInto(ctx, src, uri(src.path(), "mode=ro", "immutable=1"), stage, 0, nil)
	if read != nil {
		read()
	}
	// Checked whether the copy failed or not: pages a writer's checkpoint left half written
	// fail it (SQLITE_CORRUPT) as often as they tear it, and such a database is sound.
	after, serr := src.File.Stat()
	if serr != nil {
		return serr
	}
	if !unchanged(before, after) || !walEmpty(src) || dbLocked(src) {
		// The copy's pages, torn, are what the next backup into it would read first (its
		// header, its page size) and fail on.
		os.Truncate(stage, 0)
		return errChanged
	}
	return err
}

// isWAL reports whether the database f is in WAL mode: its header's read and write versions
// (bytes 18 and 19) are 2.
func isWAL(f *os.File) bool {
	b := make([]byte, 2)
	_, err := f.ReadAt(b, 18)
	return err == nil && b[0] == 2 && b[1] == 2
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// walEmpty reports whether src has no commits in a -wal file: none there, or an empty one.
func walEmpty(src Source) bool {
	info, err := os.Lstat(src.path() + "-wal")
	return noSidecar(err) || err == nil && info.Mode().IsRegular() && info.Size() == 0
}

// backupInto runs the online backup from the database at srcURI into the file stage, all
// pages in one step: small steps restart whenever a writer commits, and may never finish.
// While the source stays busy it retries until timeout. It then checks that the file SQLite
// read is the walk's (see checkOpened); backedUp, when set, runs just before.
func backupInto(ctx context.Context, src Source, srcURI, stage string, timeout time.Duration, backedUp func()) error {
	db, err := sql.Open("sqlite", srcURI)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := backupConn(ctx, conn, stage, timeout); err != nil {
		return err
	}
	if backedUp != nil {
		backedUp()
	}
	opened, err := mainFile(ctx, conn)
	if err != nil {
		return err
	}
	return checkOpened(src, opened)
}

// mainFile returns the name SQLite opened conn's main database by. It asks with the PRAGMA
// itself, which needs no lock: a SELECT from pragma_database_list loads the schema first,
// which waits for a writer's lock only as long as the busy handler (busyWait), and fails a
// copy already made whole when the next commit holds it longer.
func mainFile(ctx context.Context, conn *sql.Conn) (string, error) {
	rows, err := conn.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var opened string
	for rows.Next() {
		var seq int
		var name, file string
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", err
		}
		if name == "main" {
			opened = file
		}
	}
	return opened, rows.Err()
}

func backupConn(ctx context.Context, conn *sql.Conn, stage string, timeout time.Duration) error {
	return conn.Raw(func(dc any) error {
		b, err := dc.(backuper).NewBackup(uri(stage, "_pragma=journal_mode(off)", "_pragma=synchronous(off)"))
		if err != nil {
			return err
		}
		err = stepAll(ctx, b, timeout)
		if ferr := b.Finish(); err == nil {
			err = ferr
		}
		return err
	})
}

// stepAll copies every page; modernc's Step reports whether more pages remain.
func stepAll(ctx context.Context, b *sqlite.Backup, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		more, err := b.Step(-1)
		switch {
		case err == nil && !more:
			return nil
		case err == nil:
			continue
		case !isCode(err, sqlite3.SQLITE_BUSY) && !isCode(err, sqlite3.SQLITE_LOCKED):
			return stepError{err}
		case time.Now().After(deadline):
			return lockedError{err, timeout}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryPause):
		}
	}
}

// lockedError is a database still locked when the wait ran out. Its text is not the
// driver's, which for a backup step reads "database is locked: not an error (5)
// (SQLITE_BUSY)": the line cron mails must not say it is no error. The driver's error stays
// in the chain.
type lockedError struct {
	err     error
	timeout time.Duration
}

func (e lockedError) Error() string {
	return fmt.Sprintf("the database is locked by another process (still locked after %v; --sqlite-timeout waits longer)", e.timeout)
}

func (e lockedError) Unwrap() error { return e.err }

// stepError is any other error of a backup step. The driver words it with the source
// connection's message, which is "not an error" when the step failed on the copy's side
// (such as a full disk): its text says the cause by the result code instead. The driver's
// error stays in the chain.
type stepError struct{ err error }

func (e stepError) Error() string {
	var se *sqlite.Error
	if !errors.As(e.err, &se) {
		return e.err.Error()
	}
	if se.Code() == sqlite3.SQLITE_READONLY_DIRECTORY { // see copyDatabase
		return "SQLite would have to make a -wal beside it, which a backup does not: its application closed it while it was read (each time until --sqlite-timeout), or has it open by another name (a hard link)"
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return "no room to stage its copy (the disk is full)"
	case sqlite3.SQLITE_IOERR:
		return fmt.Sprintf("an I/O error reading it or writing its copy (SQLite error %d)", se.Code())
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Sprintf("not a valid database, though it begins like one (damaged; SQLite error %d)", se.Code())
	}
	if text, ok := sqlite.ErrorCodeString[se.Code()&0xff]; ok {
		return fmt.Sprintf("copying it: %s", text)
	}
	return fmt.Sprintf("copying it: SQLite error %d", se.Code())
}

func (e stepError) Unwrap() error { return e.err }

// checkRate is the slowest pace of PRAGMA quick_check over a database's pages that a
// check's time bound allows for: a tenth, or less, of what it does on a disk.
const checkRate = 10 << 20 // bytes a second

// checkBudget is how long the quick_check of a database of size bytes may take: what its
// size needs at checkRate, and timeout (--sqlite-timeout) beyond that. quick_check
// evaluates each row's NOT NULL generated columns, whose expressions, from the database's
// schema, whoever wrote it chose: one can take a second a row, and a check days.
func checkBudget(size int64, timeout time.Duration) time.Duration {
	return timeout + time.Duration(size/checkRate+1)*time.Second
}

// quickCheck runs PRAGMA quick_check on the staged copy, which nothing else uses: immutable,
// so that SQLite makes no -shm or -wal beside it. A check still running after budget is
// interrupted, and fails.
func quickCheck(ctx context.Context, stage string, budget time.Duration) error {
	db, err := openWithStandIns(ctx, stage)
	if err != nil {
		return fmt.Errorf("checking the copy: reading its schema: %w", err)
	}
	defer db.Close()
	qctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	// A virtual table the check cannot open fails it in one of two places. Opened lazily, as
	// FTS5 loads its tokenizer, it fails the check's run, after the check of every page,
	// which would have returned its findings first: only then may the tables be checked one
	// at a time. Opened as the check is prepared (a constructor that fails, as any row
	// written into sqlite_schema can name), it fails before a page is read: one table at a
	// time, no check would see a page used twice, by the free list and a table, or by two.
	var result string
	conn, err := db.Conn(qctx)
	if err == nil {
		defer conn.Close()
		var stmt *sql.Stmt
		if stmt, err = conn.PrepareContext(qctx, "PRAGMA quick_check"); err == nil {
			err = stmt.QueryRowContext(qctx).Scan(&result)
			stmt.Close()
			if err != nil && qctx.Err() == nil {
				result, err = checkTables(qctx, conn, err)
			}
		}
	}
	if err != nil && ctx.Err() == nil && qctx.Err() != nil {
		return fmt.Errorf("checking the copy: quick_check still running after %v (--sqlite-timeout beyond a second per 10 MiB of database; its schema's NOT NULL generated columns are computed for every row)", budget.Round(time.Second))
	}
	if err != nil {
		return fmt.Errorf("checking the copy: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("the copy fails quick_check: %s", result)
	}
	return nil
}

// checkTables runs quick_check over each table's b-tree and its indexes', and then over each
// virtual table, one table at a time, for a database whose check as a whole failed with
// whole because one of its virtual tables could not be opened: as FTS5 cannot without the
// tokenizer the application registers. Such a table is left out: what it keeps, in its
// shadow tables, is checked as any table is. Any other virtual table is checked as the whole
// check would have, had it reached it (an R*Tree, that its nodes agree). It is called only
// once the whole check has checked every page (see quickCheck): alone, it would not see a
// page that two b-trees, or a b-tree and the free list, both use. A database without a
// virtual table fails with whole.
func checkTables(ctx context.Context, db *sql.Conn, whole error) (string, error) {
	tables, err := schemaTables(ctx, db)
	if err != nil || !tables[len(tables)-1].virtual { // the virtual tables come last
		return "", whole
	}
	for _, table := range tables {
		var result string
		err := db.QueryRowContext(ctx, "SELECT quick_check FROM pragma_quick_check(?)", table.name).Scan(&result)
		if err != nil && table.fts5 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("table %q: %w", table.name, err)
		}
		if result != "ok" {
			return result, nil
		}
	}
	return "ok", nil
}

// schemaTable is a table of the schema as checkTables checks it.
type schemaTable struct {
	name    string
	virtual bool
	fts5    bool // a virtual table of FTS5's, which may need the application's tokenizer
}

// schemaTables lists the tables that have a b-tree of their own, sqlite_schema first, and
// then the virtual tables.
func schemaTables(ctx context.Context, db *sql.Conn) ([]schemaTable, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, rootpage = 0, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table' AND rootpage >= 0 ORDER BY rootpage = 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tables := []schemaTable{{name: "sqlite_schema"}}
	for rows.Next() {
		var name, text string
		var virtual bool
		if err := rows.Scan(&name, &virtual, &text); err != nil {
			return nil, err
		}
		tables = append(tables, schemaTable{name, virtual, virtual && module(text) == "fts5"})
	}
	return tables, rows.Err()
}

// module returns the lower-case name of the module a CREATE VIRTUAL TABLE statement names
// after USING; "" for any other.
func module(text string) string {
	toks := sqlTokens(upToNUL(text))
	for i := 0; i+1 < len(toks); i++ {
		if strings.EqualFold(toks[i], "using") {
			return foldName(unquote(toks[i+1]))
		}
	}
	return ""
}

// isCode reports whether err is an SQLite error with the primary or extended result code.
func isCode(err error, code int) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == code || e.Code()&0xff == code
}
