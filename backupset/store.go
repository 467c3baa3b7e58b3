package backupset

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store is where a set's files live: a folder, or a prefix in an S3 bucket. It offers only
// the primitives the set's rules need, so that the rules (lock, LATEST, retention) are
// written once and a folder and a bucket differ only here. Names are plain file names
// inside the set, never paths. Every method may be called from any goroutine.
type Store interface {
	// Location names the set in messages: a folder's path, or s3://BUCKET/PREFIX.
	Location() string
	// List returns the set's files, in no particular order; nothing for a set that does
	// not exist yet.
	List(ctx context.Context) ([]Object, error)
	// Stat describes one file; its error matches fs.ErrNotExist when there is none.
	Stat(ctx context.Context, name string) (Object, error)
	// ReadFile reads a small file whole, refusing one that is larger than limit or not a
	// regular file, and returns its ETag with it.
	ReadFile(ctx context.Context, name string, limit int64) ([]byte, string, error)
	// Open opens a file for random reads (a zip is read from its end).
	Open(ctx context.Context, name string) (File, error)
	// Put writes a small file whole. With ifMatch "" it creates the file only if none is
	// there (ErrExists otherwise); with an ETag it replaces the file only while it still
	// has that ETag (ErrChanged otherwise). It returns the new ETag.
	Put(ctx context.Context, name string, data []byte, ifMatch string) (string, error)
	// Delete removes a file only while it still has the ETag ifMatch (ErrChanged
	// otherwise); a missing file is no error.
	Delete(ctx context.Context, name, ifMatch string) error
	// Clean removes what runs killed before they could clean up left behind (temp files,
	// unfinished uploads) and returns their names. Only a holder of the lock may call it.
	Clean(ctx context.Context) ([]string, error)
	// Lock takes the set's writer lock, waiting up to wait. A held lock elsewhere is a
	// *LockedError.
	Lock(ctx context.Context, wait time.Duration) (Held, error)
}

// Object is one file of a store.
type Object struct {
	Name string
	Size int64
	// ETag changes whenever the content does; Put and Delete take it as their condition.
	ETag string
	// NotRegular names the kind of a folder entry that is not a regular file ("a symlink");
	// "" for a regular file or an object.
	NotRegular string
}

// File is an opened file of a store, read at random.
type File interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Held is a held writer lock.
type Held interface {
	// Release gives the lock up.
	Release() error
}

// The conditions of Put and Delete that did not hold.
var (
	// ErrExists is Put's error when a file is already at a name it was to create.
	ErrExists = errors.New("already exists")
	// ErrChanged is the error of Put and Delete when the file no longer has the ETag the
	// caller read: another writer changed or removed it.
	ErrChanged = errors.New("was changed by another writer")
)
