package backupset

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
)

// Attic is a local folder that pruned runs are moved into instead of being deleted, for
// operators who must keep history. A file already in the attic is never replaced.
type Attic struct {
	Dir string
}

// take moves the entry's archive and then its receipt (the order in which prune deletes
// them) from the set into the attic: by rename when the set is a folder on the attic's file
// system, else by copy, sync, read back and compare, and then a delete on the ETag the plan
// judged.
func (a Attic) take(ctx context.Context, st Store, e Entry) error {
	if e.Archive {
		want := ""
		if e.Receipt != nil && e.Receipt.Archive != nil {
			want = e.Receipt.Archive.SHA256
		}
		if err := a.move(ctx, st, e.Name, e.ETag, want); err != nil {
			return err
		}
	}
	if e.Receipt != nil {
		return a.move(ctx, st, e.Name+ReceiptSuffix, e.ReceiptETag, "")
	}
	return nil
}

// move moves one file; want is the SHA-256 its content must have, "" for any.
func (a Attic) move(ctx context.Context, st Store, name, etag, want string) error {
	dst := filepath.Join(a.Dir, name)
	if f, ok := st.(Folder); ok {
		if err := f.check(ctx, name, etag); err != nil {
			return err
		}
		err := unix.Renameat2(unix.AT_FDCWD, f.path(name), unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
		if err == nil {
			return errors.Join(atomicfile.SyncDir(a.Dir), atomicfile.SyncDir(f.Dir))
		}
		if !errors.Is(err, unix.EXDEV) && !errors.Is(err, unix.EINVAL) {
			return &fs.PathError{Op: "move to the attic", Path: f.path(name), Err: err}
		}
		// EXDEV: another file system. EINVAL: one whose rename cannot refuse to replace.
	}
	if err := a.copy(ctx, st, name, want); err != nil {
		return err
	}
	return st.Delete(ctx, name, etag)
}

// copy copies the store's file name into the attic (see copyInto).
func (a Attic) copy(ctx context.Context, st Store, name, want string) error {
	src, err := st.Open(ctx, name)
	if err != nil {
		return err
	}
	defer src.Close()
	return copyInto(a.Dir, name, io.NewSectionReader(src, 0, src.Size()), want)
}
