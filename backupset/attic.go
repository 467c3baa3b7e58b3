package backupset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// copy copies the store's file name into the attic through a synced temp file, reads the
// copy back and compares it with what was read (and with want), and links it into place.
func (a Attic) copy(ctx context.Context, st Store, name, want string) error {
	src, err := st.Open(ctx, name)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(a.Dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	sum, err := copySynced(tmp, io.NewSectionReader(src, 0, src.Size()))
	if err != nil {
		return err
	}
	back, err := fileSHA256(tmp.Name())
	switch {
	case err != nil:
		return err
	case back != sum:
		return fmt.Errorf("copying %s into the attic: the copy reads back differently", name)
	case want != "" && sum != want:
		return fmt.Errorf("copying %s into the attic: its SHA-256 is %s, its receipt says %s; not deleted", name, sum, want)
	}
	if err := os.Link(tmp.Name(), filepath.Join(a.Dir, name)); err != nil {
		return err
	}
	return atomicfile.SyncDir(a.Dir)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
