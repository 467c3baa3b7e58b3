package sqlitesnap

import (
	"context"
	"fmt"
	"os"

	"backup/eintr"
)

// A database whose -wal holds commits (SQLite reads a -wal beside any database, whatever its
// header says) needs its -shm to be read: SQLite, even on a
// read-only connection, makes one beside it when it is missing (after a crash that lost it,
// or a copy that left it out), and for root, who may write any folder, it would (here it
// may not: see guardedOpen, and without one it cannot read the database). That is a
// new file in the tree, in a folder whose owner may not be able to remove it, and a folder
// whose mtime moves. So such a database and its -wal are copied, as they are, into the
// staging folder, checked not to have changed meanwhile (nor a -shm to have appeared: a
// connection came), and SQLite recovers the copy there and checkpoints it into one file.
// No connection has such a database open (each would have the -shm, or, in exclusive
// locking mode, which uses none, the database's lock, checked before and after), so the
// pair read unchanged is the database as of its last commit.

// copyWithWAL copies the database src, which has commits in a -wal and no -shm (or a stale
// one: see staleShm), with that -wal into stage, and makes the copy whole. errChanged when
// either changed while they were copied, or a -shm appeared or is held, or the database is
// locked (a connection came, which may have written): stage is then empty again, with
// nothing beside it.
func copyWithWAL(ctx context.Context, src Source, stage string) error {
	wal, err := openRegular(src.path() + "-wal")
	if isNotExist(err) {
		return errChanged // a connection came and checkpointed it
	}
	if err != nil {
		return fmt.Errorf("its -wal: %w", pathCause(err))
	}
	defer wal.Close()
	hadShm := exists(src.path() + "-shm")
	err = copyPair(ctx, src, wal, "-wal", stage, nil)
	if err == nil && (exists(src.path()+"-shm") && (!hadShm || !staleShm(src)) || dbLocked(src)) {
		err = errChanged
	}
	if err == nil {
		err = settle(ctx, stage, "-wal", "recovering the copy of its -wal")
	}
	if err != nil {
		// A -wal beside stage must not be read with it when it is written again.
		eintr.Remove(stage + "-wal")
		eintr.Remove(stage + "-shm")
		os.Truncate(stage, 0)
	}
	return err
}
