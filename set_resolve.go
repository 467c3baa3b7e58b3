package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"backup/archive"
	"backup/atomicfile"
	"backup/backupset"
	"backup/backupset/s3store"
	"backup/eintr"
	"backup/format"
	"backup/seal"

	"golang.org/x/sys/unix"
)

// archiveRef is the archive an ARCHIVE argument names.
type archiveRef struct {
	// path names the archive in messages and --json: a file's path, or s3://BUCKET/PREFIX/NAME.
	path string
	// store is the set in a bucket the archive is in; nil for a file (a folder set's
	// archive is a file).
	store backupset.Store
	// entry is the set's LATEST target, with its receipt, when the argument named a set.
	entry backupset.Entry
	// ids decrypt an encrypted archive; without, opening one is seal.ErrNoIdentity.
	ids *seal.Identities
	// notes holds the manifest's records of what was skipped, excluded and warned about,
	// which list shows (see archive.ReadOptions).
	notes bool
	// pinned is a folder set's LATEST target, open since it was resolved: a run may move
	// LATEST on and prune that file before the command reads it, and the command must read
	// the archive it resolved, not fail on its name. An archive named as a file is pinned
	// by verify alone (pinNamed); nil otherwise.
	pinned *os.File
	// pinnedSize is pinned's size.
	pinnedSize int64
	// sealedReceipt says that the receipt the archive is checked against (verify's, found
	// beside a file) records an encrypted archive; a set's target's says so itself.
	sealedReceipt bool
}

// resolveArchive returns the archive an ARCHIVE argument names: the path itself, or, for a
// backup set (a folder, or s3://BUCKET/PREFIX), the archive its LATEST names, failing closed
// (never "the newest file"). verify, list and restore take their ARCHIVE through it, so
// that `backup restore DIR DEST` restores the set's LATEST backup.
func resolveArchive(ctx context.Context, arg string, s3 *s3Flags) (archiveRef, error) {
	if s3store.IsLocation(arg) {
		st, err := s3.open(ctx, arg)
		if err != nil {
			return archiveRef{}, err
		}
		e, err := backupset.Latest(ctx, st)
		if err != nil {
			return archiveRef{}, err
		}
		return archiveRef{path: st.Location() + "/" + e.Name, store: st, entry: e}, nil
	}
	info, err := os.Stat(arg)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// An I/O error: a set's folder or an archive file, which is not known; opening it as
		// a file would say "is a directory" of a set.
		return archiveRef{}, err
	}
	if err != nil || !info.IsDir() {
		return archiveRef{path: arg}, nil // the command's own open reports a missing or unreadable archive
	}
	dir, err := kernelPath(arg) // the folder os.Stat found: Join would clean lnk/.. away
	if err != nil {
		return archiveRef{}, err
	}
	return pinLatest(ctx, backupset.Folder{Dir: dir})
}

// pinLatest resolves the folder set's LATEST and opens its target. Readers take no lock: a
// target gone by the time it is opened was pruned by a run that moved LATEST on (as Latest
// itself allows for), and the set is read again, at most pinTries times. A target that
// cannot be opened for another reason is left to the command's own open, which says why.
func pinLatest(ctx context.Context, set backupset.Folder) (archiveRef, error) {
	for try := 1; ; try++ {
		e, err := backupset.Latest(ctx, set)
		if err != nil {
			return archiveRef{}, err
		}
		ref := archiveRef{path: filepath.Join(set.Dir, e.Name), entry: e}
		f, size, err := openRegular(ref.path)
		if errors.Is(err, fs.ErrNotExist) && try < pinTries && backupset.Moved(ctx, set, e.Name) {
			continue
		}
		if err == nil {
			ref.pinned, ref.pinnedSize = f, size
		}
		return ref, nil
	}
}

// superseded says whether err, a read of a bucket set's LATEST target that found the object
// gone, is a run having moved LATEST on and pruned that target while the command read it:
// the command then starts again on the new target, as Latest reads the set again, instead
// of calling a healthy set damaged. A folder set's target is held open (see pinLatest).
func (a archiveRef) superseded(ctx context.Context, err error) bool {
	return a.store != nil && a.entry.Name != "" && ctx.Err() == nil && errors.Is(err, fs.ErrNotExist) &&
		backupset.Moved(ctx, a.store, a.entry.Name)
}

// readAgain says whether the command should start again on the set's new LATEST target:
// err is a read that superseded says a run pruned, and rereads, the times it has started
// again, is under pinTries, which it counts.
func (a archiveRef) readAgain(ctx context.Context, err error, rereads *int) bool {
	if err == nil || *rereads >= pinTries || !a.superseded(ctx, err) {
		return false
	}
	*rereads++
	return true
}

// pinTries bounds how often pinLatest, and a command whose target superseded says a run
// pruned, read a set again whose LATEST moved under them.
const pinTries = 4

// pinNamed pins an archive named as a file (a set's target is pinned already), opened under
// a shared flock (atomicfile.ReadLocked): `create --force -o` swaps in the archive, then its
// receipt, holding both locked, and the receipt read beside the archive must be of the same
// run. The returned unlock gives the flock up once the receipt is read, so that no Publish
// waits on a long read; the file stays pinned and is the one read. A file that cannot be
// opened so is left to the command's own open, which says why.
func (a *archiveRef) pinNamed() (unlock func()) {
	if a.pinned != nil || a.store != nil {
		return func() {}
	}
	f, size, unlock, err := openReadLocked(a.path)
	if err != nil {
		return func() {}
	}
	a.pinned, a.pinnedSize = f, size
	return unlock
}

// openReadLocked is atomicfile.ReadLocked, with the size of the file opened; on an error
// nothing is left open or locked.
func openReadLocked(path string) (f *os.File, size int64, unlock func(), err error) {
	f, unlock, err = atomicfile.ReadLocked(path)
	if err != nil {
		return nil, 0, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		unlock()
		f.Close()
		return nil, 0, nil, err
	}
	return f, info.Size(), unlock, nil
}

// close lets go of the pinned archive file.
func (a archiveRef) close() {
	if a.pinned != nil {
		a.pinned.Close()
	}
}

// openLocal opens the archive file of a: the pinned file again (a description of its own,
// whose offset no other reader moves, named by a's path in messages), else by its path,
// without blocking, refused unless regular.
func (a archiveRef) openLocal() (*os.File, int64, error) {
	if a.pinned == nil {
		return openRegular(a.path)
	}
	fd, err := eintr.Open(fmt.Sprintf("/proc/self/fd/%d", a.pinned.Fd()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		// No /proc (a chroot, a container without it), where a run still works: the name
		// again, while it leads to the file pinned.
		return a.reopenByName()
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: a.path, Err: err}
	}
	return os.NewFile(uintptr(fd), a.path), a.pinnedSize, nil
}

// reopenByName opens the pinned archive again by its path, refused once the path leads to
// another file.
func (a archiveRef) reopenByName() (*os.File, int64, error) {
	f, _, err := openRegular(a.path)
	if err != nil {
		return nil, 0, err
	}
	at, err := f.Stat()
	var pinned fs.FileInfo
	if err == nil {
		pinned, err = a.pinned.Stat()
	}
	if err == nil && !os.SameFile(at, pinned) {
		err = &fs.PathError{Op: "open", Path: a.path, Err: errors.New("replaced by another file since it was opened")}
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, a.pinnedSize, nil
}

// open reads the archive's directory and manifest. An archive in a bucket is read with
// ranged requests, never downloaded whole.
func (a archiveRef) open(ctx context.Context) (*archive.Reader, error) {
	var r *archive.Reader
	var err error
	if a.store == nil {
		var f *os.File
		var size int64
		if f, size, err = a.openLocal(); err == nil {
			r, err = archive.OpenFile(f, size, archive.ReadOptions{Unseal: a.unseal(), Notes: a.notes})
		}
	} else {
		var f backupset.File
		if f, err = a.store.Open(ctx, a.entry.Name); err == nil {
			// The object holds no connection between reads, so the reader need not close it.
			if r, err = archive.NewReaderWith(f, f.Size(), archive.ReadOptions{Unseal: a.unseal(), Notes: a.notes}); err == nil {
				spoolFor(f, r)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := a.proven(r); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// unseal opens the archive file as its receipt records it: one recorded as encrypted must
// be an age file (a plain zip in its place is not the archive the run wrote, and would be
// read without a key).
func (a archiveRef) unseal() archive.Unseal {
	if a.sealedReceipt || a.entry.Receipt != nil && a.entry.Receipt.Encryption != nil {
		return a.ids.UnsealAge
	}
	return a.ids.Unseal
}

// spoolFor lets an archive in a bucket keep the blocks it fetches on the local disk, for a
// command that reads them twice (see s3store.Object.Spool), once its central directory
// says how much a restore of it writes: that much is left free on the spool's file system,
// and spoolMargin more, for a destination on the same disk.
func spoolFor(f backupset.File, r *archive.Reader) {
	sp, ok := f.(interface{ Spool(reserve int64) })
	if !ok {
		return
	}
	reserve := int64(spoolMargin)
	for _, e := range r.Entries {
		// A hostile central directory's sizes must not add up past the largest int64 and
		// wrap to a reserve that lets the spool fill the disk.
		reserve += min(max(e.Size, 0), math.MaxInt64-reserve)
	}
	sp.Spool(reserve)
}

// spoolMargin is what a spool leaves free beyond the bytes of the archive's entries: the
// journal and the folders (a restore that writes a before-state keeps no spool).
const spoolMargin = 256 << 20

// proven says why a set's LATEST target cannot be read as its receipt describes it: Latest
// trusted the receipt's status, which only the manifest proves, and the archive's name,
// which says the set's source: only the entries prove which source it holds (another set's
// run put in its place, with its receipt, matches that receipt). A damaged manifest is left
// to the command, which reports it as such.
func (a archiveRef) proven(r *archive.Reader) error {
	if a.entry.Receipt == nil {
		return nil
	}
	if err := targetOfSet(a.entry.Name, r.Entries); err != nil {
		return err
	}
	if r.HasManifest && r.Manifest == nil {
		return nil
	}
	status := ""
	if r.Manifest != nil {
		status = r.Manifest.Status
	}
	return a.entry.Receipt.StatusProven("its receipt", r.HasManifest, status)
}

// matchesReceipt says why r, a set's LATEST target, is not the archive its receipt
// describes, by its SHA-256, as a notReceipts, or nil; nil too for an archive named as a
// file. A read of it that fails is that error. Whoever may write the set (a folder, a
// bucket) can swap a file's bytes and edit the manifest to agree, keeping the size Latest
// compared: only the receipt's SHA-256 tells, and restore checks every file against that
// manifest alone. whole says the command reads every entry: an archive in a bucket is then
// hashed first, its blocks kept in the spool for the reads that follow; a read of a few
// entries (restore --include) would fetch the whole object for it, and is not (see
// docs/s3.md).
func (a archiveRef) matchesReceipt(ctx context.Context, r *archive.Reader, whole bool) error {
	if a.entry.Receipt == nil || a.store != nil && !whole {
		return nil
	}
	want, ok := a.entry.Receipt.Summary()
	if !ok {
		return nil
	}
	got, err := r.Sum(ctx)
	switch {
	case errors.Is(err, archive.ErrChangedWhileRead):
		return notReceipts{err}
	case err != nil:
		return err
	}
	if err := want.Match(got); err != nil {
		return notReceipts{err}
	}
	return nil
}

// notReceipts is matchesReceipt's verdict that the archive is not its receipt's; any other
// error of it is a read that failed, which says nothing of the archive's bytes.
type notReceipts struct{ error }

func (e notReceipts) Unwrap() error { return e.error }

// receipt returns the receipt to check the archive against and its path, as findReceipt
// does; for a set's LATEST target, the one the set holds beside it, already read and
// matched by Latest (read again by name, it may be gone with a target pruned since).
func (a archiveRef) receipt(explicit string) (string, *format.Receipt, error) {
	if (a.store == nil && a.entry.Receipt == nil) || explicit != "" {
		return findReceipt(a.path, explicit)
	}
	return a.path + format.ReceiptSuffix, a.entry.Receipt, nil
}

// verify reads the archive back as backup verify does; from a bucket, with ranged reads in
// parallel.
func (a archiveRef) verify(ctx context.Context, opts archive.VerifyOptions) (*archive.VerifyResult, error) {
	opts.Unseal = a.unseal()
	if a.store == nil {
		f, size, err := a.openLocal()
		if err != nil {
			return nil, err
		}
		return archive.VerifyFile(ctx, f, size, opts)
	}
	r, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	return r.Verify(ctx, opts)
}

// file opens the archive file as stored, for what is checked without reading it as a zip:
// opened without blocking and refused unless regular (a local file), or an object read
// with ranged requests.
func (a archiveRef) file(ctx context.Context) (backupset.File, error) {
	if a.store != nil {
		return a.store.Open(ctx, a.entry.Name)
	}
	f, size, err := a.openLocal()
	if err != nil {
		return nil, err
	}
	return sizedFile{f, size}, nil
}

// sizedFile is a local file as a backupset.File.
type sizedFile struct {
	*os.File
	size int64
}

func (f sizedFile) Size() int64 { return f.size }

// sealed reports whether the archive is encrypted, by its first bytes; false when it
// cannot be opened (opening it as a zip then says why). A read of those bytes that fails is
// the error: it is neither a plain archive nor an encrypted one to be told so.
func (a archiveRef) sealed(ctx context.Context) (bool, error) {
	f, err := a.file(ctx)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	return seal.ReadsSealed(f)
}
