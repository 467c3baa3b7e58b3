package backupset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
)

// Attic is a local folder that pruned runs are moved into instead of being deleted, for
// operators who must keep history. A file already in the attic is never replaced.
type Attic struct {
	Dir string
	// journal records the temp names this prune makes in Dir (see sweepAttic).
	journal *atticJournal
}

// sweep removes the temp files that killed prunes left in the attic, and only those (see
// sweepAttic), and returns their names.
func (a *Attic) sweep() []string { return sweepAttic(a.Dir) }

// done removes this prune's journal: every temp file it made is gone.
func (a *Attic) done() {
	if a.journal != nil {
		a.journal.close()
	}
}

// atticFile is one file of a run to move: its name, the ETag the plan judged, and the
// SHA-256 its content must have ("" for any).
type atticFile struct {
	name, etag, want string
}

// take moves the entry's archive and its receipt from the set into the attic as a unit: by
// rename when the set is a folder on the attic's file system, else by copy, sync, read back
// and compare, and then a delete from the set on the ETag the plan judged (the archive
// first, the order in which prune deletes). When the second file cannot follow the first,
// the first is taken back: the run stays whole in the set and nothing of it is left in the
// attic. Its error says where the run's files are.
func (a *Attic) take(ctx context.Context, st Store, e Entry) error {
	var files []atticFile
	if e.Archive {
		want := ""
		if e.Receipt != nil && e.Receipt.Archive != nil {
			want = e.Receipt.Archive.SHA256
		}
		files = append(files, atticFile{e.Name, e.ETag, want})
	}
	if e.Receipt != nil {
		files = append(files, atticFile{e.Name + format.ReceiptSuffix, e.ReceiptETag, ""})
	}
	if f, ok := st.(Folder); ok {
		renamed, err := a.renameAll(ctx, f, e.Name, files)
		if renamed || err != nil {
			return err
		}
	}
	return a.copyAll(ctx, st, e.Name, files)
}

// renameAll moves the files by rename, refusing to replace a file in the attic. It returns
// false and no error when the attic's file system cannot take them by rename (another file
// system, or one whose rename cannot refuse to replace), before anything moved.
func (a *Attic) renameAll(ctx context.Context, f Folder, run string, files []atticFile) (bool, error) {
	for i, file := range files {
		err := f.check(ctx, file.name, file.etag)
		if err == nil {
			err = renameNoReplace(f.path(file.name), filepath.Join(a.Dir, file.name))
		}
		if i == 0 && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL)) {
			return false, nil
		}
		if err != nil {
			var back error
			for _, done := range files[:i] {
				back = errors.Join(back, renameNoReplace(filepath.Join(a.Dir, done.name), f.path(done.name)))
			}
			return true, notMoved(run, back, err)
		}
	}
	if err := errors.Join(atomicfile.SyncDir(a.Dir), atomicfile.SyncDir(f.Dir)); err != nil {
		// Both renames are made: the run is out of the set and in the attic, and is said
		// so, with the error.
		return true, &MovedError{Name: run, Err: err}
	}
	return true, nil
}

// MovedError is a prune's error when it moved a run into the attic whole but could not sync
// the folders after (the run has left the set, and is counted as moved).
type MovedError struct {
	Name string // the archive's
	Err  error  // the failed sync
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("moved %s to the attic, but a crash may still undo the move: %v", format.QuoteName(e.Name), e.Err)
}

// Unwrap returns the failed sync.
func (e *MovedError) Unwrap() error { return e.Err }

// copyAll copies the files into the attic, and only once all are there deletes them from
// the set.
func (a *Attic) copyAll(ctx context.Context, st Store, run string, files []atticFile) error {
	// made are the copies this run put in the attic: only those are taken back. A file that
	// was there with the same bytes (a killed prune's copy, or another set's run of the
	// same name) stays.
	var made []atticFile
	for _, file := range files {
		ok, err := a.copy(ctx, st, file.name, file.want)
		if ok { // linked, even when the sync after failed
			made = append(made, file)
		}
		if err != nil {
			return notMoved(run, a.remove(made), err)
		}
	}
	for i, file := range files {
		err := st.Delete(ctx, file.name, file.etag)
		switch {
		case err != nil && i == 0:
			// The set holds the run as it was: its copies leave the attic again.
			return notMoved(run, a.remove(made), err)
		case err != nil:
			// The archive has left the set: the run is moved, as a delete that leaves the
			// receipt is a delete, and the next prune takes the receipt (the attic's copy
			// has its bytes).
			return &ReceiptLeftError{Name: run, Err: err, Attic: true}
		}
	}
	return nil
}

// remove deletes the copies of files made in the attic.
func (a *Attic) remove(files []atticFile) error {
	var err error
	for _, file := range files {
		if rerr := eintr.Remove(filepath.Join(a.Dir, file.name)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return errors.Join(err, atomicfile.SyncDir(a.Dir))
}

// notMoved is the error of a run that could not be moved whole, for cause: it stays whole in
// the set, unless taking back what had moved failed too (back), which the error then says.
func notMoved(run string, back, cause error) error {
	if back == nil {
		return fmt.Errorf("%s not moved to the attic (it stays whole in the set): %w", run, cause)
	}
	return fmt.Errorf("%s not moved to the attic: %w; and taking back what had moved failed: %v", run, cause, back)
}

// renameNoReplace renames from to to, failing when to exists.
func renameNoReplace(from, to string) error {
	err := eintr.Rename(from, to, unix.RENAME_NOREPLACE)
	if err != nil {
		return &fs.PathError{Op: "move to the attic", Path: from, Err: err}
	}
	return nil
}

// copy copies the store's file name into the attic (see copyInto), through a temp file
// the journal records, and says whether the file in the attic is this copy.
func (a *Attic) copy(ctx context.Context, st Store, name, want string) (bool, error) {
	src, err := st.Open(ctx, name)
	if err != nil {
		return false, err
	}
	defer src.Close()
	if a.journal == nil {
		a.journal = &atticJournal{dir: a.Dir}
	}
	return copyInto(ctx, a.Dir, name, io.NewSectionReader(src, 0, src.Size()), want, a.journal.createTemp)
}
