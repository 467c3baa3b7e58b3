package backupset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
)

// ErrAdoptUnsupported is Adopt's error for a set in a bucket: copying an archive in needs a
// streaming create-once upload, which the set's Store does not offer yet.
var ErrAdoptUnsupported = errors.New("adopting into a set in a bucket is not supported yet")

// Adoption is an archive made elsewhere, already verified against its receipt, to copy into
// the set.
type Adoption struct {
	Receipt *format.Receipt // its receipt; Archive.SHA256 is the content's, as verified
	// Archive reads the Size bytes that were verified: the descriptor that was checked,
	// never the path opened again (it could be a FIFO by now).
	Archive io.ReaderAt
	Size    int64
	// Source is the source's name the archive holds; it must be the set's. An encrypted
	// archive's is Sealed (its name holds none): the caller checks what it holds.
	Source string
}

// Adopt copies the archive into the set under the default name its receipt's start time
// gives, receipt first and archive last, and returns that name. An archive whose SHA-256 a
// receipt of the set records already is not copied again (already is true) when the set's
// copy hashes to it, and refused when it does not; a receipt left
// without its archive by a killed adoption is completed, not duplicated. The copy is written
// to a temp file that the set's cleanup knows, hashed on the way, synced, compared with the
// receipt, and renamed into place only then: the set never shows a partial archive. A copy
// that fails takes the receipt written for it back out.
func (l *Lock) Adopt(ctx context.Context, a Adoption) (name string, already bool, err error) {
	f, ok := l.store.(Folder)
	if !ok {
		return "", false, ErrAdoptUnsupported
	}
	if err := checkNotFuture(a.Receipt, time.Now()); err != nil {
		return "", false, err
	}
	entries, err := Scan(ctx, l.store)
	if err != nil {
		return "", false, err
	}
	if err := l.checkSource(ctx, entries, a.Source); err != nil {
		return "", false, err
	}
	sum := a.Receipt.Archive.SHA256
	if e := findSHA(entries, sum); e != nil {
		if e.Archive {
			// Said only of a copy that reads as its receipt records: "already in the set"
			// tells the user the archive they hold can go.
			if !sameContent(f.path(e.Name), a.Size, sum) {
				return "", false, fmt.Errorf("the set's copy %s does not match its receipt, which records this archive: damaged or replaced since; nothing copied", format.QuoteName(e.Name))
			}
			return e.Name, true, nil
		}
		_, err := copyInto(ctx, f.Dir, e.Name, a.reader(), sum, nil)
		return e.Name, false, err
	}
	name, err = FreeName(ctx, l.store, a.Source, a.Receipt.StartedAt)
	if err != nil {
		return "", false, err
	}
	rc := *a.Receipt
	info := *rc.Archive
	info.Path, info.PathB64 = f.path(name), "" // the twin read was of the path adopted from
	if rc.Schema == format.SealedReceiptSchema {
		info.Path = name // the receipt of an encrypted archive names no folder
	}
	rc.Archive = &info
	data, err := rc.Marshal()
	if err != nil {
		return "", false, err
	}
	// Not Put, which writes 0644: a receipt lists paths, and create writes its own 0600.
	staged, err := atomicfile.Stage(f.path(name+format.ReceiptSuffix), data, 0o600)
	if err != nil {
		return "", false, err
	}
	staged.NoReplace = true
	if err := atomicfile.Publish(staged); err != nil {
		return "", false, err
	}
	written, err := l.store.Stat(ctx, name+format.ReceiptSuffix)
	if err != nil {
		return "", false, err
	}
	if made, err := copyInto(ctx, f.Dir, name, a.reader(), sum, nil); err != nil {
		// A copy that failed (a full disk, a changed ARCHIVE) takes its receipt back: a
		// receipt alone would be a run that lost its archive, and in an empty set one that
		// lost its LATEST. Only a kill leaves it, for the next adoption to complete. A copy
		// linked into place whose folder's sync failed goes first: an archive alone would
		// be an unknown run, kept for ever.
		var back error
		if made {
			back = eintr.Remove(f.path(name))
		}
		return "", false, errors.Join(err, back, l.store.Delete(ctx, name+format.ReceiptSuffix, written.ETag))
	}
	return name, false, nil
}

// checkSource refuses an archive of another source than the set's (its Witness's): one set,
// one source. An empty set takes any; one whose runs all failed, any of their kind. entries
// are the set's, as Scan lists them; nil to scan only when LATEST cannot say.
//
// The encrypted archives of a set name no source (Sealed): such an archive is of the set's
// series when the set's is Sealed too, and which source it holds is for the caller to check
// with a key. An encrypted archive for a plain set, or the reverse, is refused.
func (l *Lock) checkSource(ctx context.Context, entries []Entry, source string) error {
	w, err := l.Witness(ctx, entries)
	if err != nil {
		return err
	}
	want, known := SourceOf(w.Name), w.Name != ""
	if !known && w.Failed != "" && (SourceOf(w.Failed) == Sealed) != (source == Sealed) {
		// No run left an archive, but the failed ones say the set's kind (see Witness).
		want, known = SourceOf(w.Failed), true
	}
	switch {
	case !known || want == source || l.mixed && (want == Sealed) != (source == Sealed):
		return nil
	case want == Sealed:
		return fmt.Errorf("the archive is not encrypted, and %s is an encrypted backup set", l.store.Location())
	case source == Sealed:
		return fmt.Errorf("the archive is encrypted, and %s is the plain backup set of %q", l.store.Location(), want)
	}
	return fmt.Errorf("the archive holds %q, and %s is the backup set of %q", source, l.store.Location(), want)
}

// findSHA returns the entry whose receipt records the archive content sum, or nil.
func findSHA(entries []Entry, sum string) *Entry {
	for i, e := range entries {
		if e.Receipt != nil && e.Receipt.Archive != nil && e.Receipt.Archive.SHA256 == sum && e.State() != Unknown {
			return &entries[i]
		}
	}
	return nil
}

// reader reads the archive from its first byte.
func (a Adoption) reader() io.Reader { return io.NewSectionReader(a.Archive, 0, a.Size) }

// checkNotFuture refuses a run dated after now: no byte of the archive proves the times its
// receipt gives (edited, or from a machine whose clock runs ahead), and a run that started
// in 2099 would be the set's newest backup for ever, silencing the age alert of status and
// moving what prune's --keep-within counts from.
func checkNotFuture(rc *format.Receipt, now time.Time) error {
	if at := rc.StartedAt; at.After(now.Add(skew)) {
		return fmt.Errorf("its receipt says the run started in the future (%s): check the clock of the machine that ran it; nothing copied", at.Format(time.RFC3339))
	}
	if at := rc.FinishedAt; at.After(now.Add(skew)) {
		return fmt.Errorf("its receipt says the run finished in the future (%s): check the clock of the machine that ran it; nothing copied", at.Format(time.RFC3339))
	}
	return nil
}
