package sqlitesnap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// retryPause is how long a busy copy waits before it tries again, within its timeout.
const retryPause = 20 * time.Millisecond

// backuper is what modernc's connection offers for the online backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// copyDatabase copies src into stage. A read-only connection is enough for a database that
// is not in WAL mode, or whose -shm exists or whose folder may be written. A WAL database in
// a folder we cannot write and without its -shm cannot be opened read-only; then, and only
// when it has no -wal file either, it is read as immutable (its main file alone, no locks),
// and checked afterwards not to have changed meanwhile. With a -wal file immutable=1 would
// silently leave out the commits in it, so the copy fails.
func copyDatabase(ctx context.Context, src Source, stage string, timeout time.Duration) error {
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", timeout.Milliseconds())
	err := backupInto(ctx, uri(src.path(), "mode=ro", busy), stage, timeout)
	if !isCode(err, sqlite3.SQLITE_READONLY_CANTINIT) {
		return err
	}
	if _, werr := os.Lstat(src.path() + "-wal"); !isNotExist(werr) {
		return fmt.Errorf("%w (a WAL database whose -shm is missing and whose folder cannot be written, with a -wal file: it cannot be read consistently without write access)", err)
	}
	before, serr := src.File.Stat()
	if serr != nil {
		return serr
	}
	if err := backupInto(ctx, uri(src.path(), "mode=ro", "immutable=1"), stage, timeout); err != nil {
		return err
	}
	after, serr := src.File.Stat()
	if serr != nil {
		return serr
	}
	_, werr := os.Lstat(src.path() + "-wal")
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !isNotExist(werr) {
		return errors.New("changed while it was read without locks (a WAL database whose -shm is missing and whose folder cannot be written)")
	}
	return nil
}

// backupInto runs the online backup from the database at srcURI into the file stage, all
// pages in one step: small steps restart whenever a writer commits, and may never finish.
// While the source stays busy it retries until timeout.
func backupInto(ctx context.Context, srcURI, stage string, timeout time.Duration) error {
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
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("%w (still locked after %v)", err, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryPause):
		}
	}
}

// quickCheck runs PRAGMA quick_check on the staged copy, which nothing else uses: immutable,
// so that SQLite makes no -shm or -wal beside it.
func quickCheck(ctx context.Context, stage string) error {
	db, err := sql.Open("sqlite", uri(stage, "mode=ro", "immutable=1"))
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&result); err != nil {
		return fmt.Errorf("checking the copy: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("the copy fails quick_check: %s", result)
	}
	return nil
}

// isCode reports whether err is an SQLite error with the primary or extended result code.
func isCode(err error, code int) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == code || e.Code()&0xff == code
}
