package backupset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"backup/format"
)

// State is what a set's entry is, as far as retention and status are concerned; the values
// are the receipt's statuses plus two of the set's own.
type State string

// The states of an entry.
const (
	Complete   State = "complete"
	Incomplete State = "incomplete"
	// Failed is a failed run's receipt, with no archive.
	Failed State = "failed"
	// Gone is a receipt whose archive is missing, as an interrupted prune leaves it.
	Gone State = "gone"
	// Unknown is an archive whose receipt is missing, unreadable or does not match it. It is
	// never deleted.
	Unknown State = "unknown"
)

// Entry is one run found in a set folder: an archive with a default name, its receipt, or
// both.
type Entry struct {
	Name    string          // the archive's file name, also when only its receipt exists
	Source  string          // the source's name at the front of Name
	Archive bool            // an archive (of any file type) is at Name
	Size    int64           // the archive's size
	ETag    string          // the archive's, as the store gave it when the entry was read
	Receipt *format.Receipt // nil when missing or unreadable
	// ReceiptETag is the receipt's ETag as read; a prune deletes only what it judged.
	ReceiptETag string
	Problem     error // why the entry is Unknown; nil otherwise
	// lookupErr is the error of the archive's lookup, when it failed for another reason
	// than a missing file (an I/O error): Archive is false then, but not because it is
	// missing.
	lookupErr error
	// receiptMissing says the receipt was not there when it was read.
	receiptMissing bool
}

// State classifies the entry from its receipt and the files present.
func (e Entry) State() State {
	switch {
	case e.Problem != nil:
		return Unknown
	case !e.Archive && e.Receipt.Status == format.Failed && e.Receipt.Archive == nil:
		return Failed
	case !e.Archive:
		return Gone
	case e.Receipt.Status == format.Complete:
		return Complete
	case e.Receipt.Status == format.Incomplete:
		return Incomplete
	}
	return Failed
}

// Started is when the run started: the receipt's started_at, or the time in the name when
// the receipt cannot be read.
func (e Entry) Started() time.Time {
	if e.Receipt != nil {
		return e.Receipt.StartedAt
	}
	_, stamp, _ := parseName(e.Name)
	return stamp
}

// Ahead reports whether the run started more than a clock's skew after now: the machine
// that made it had its clock wrong, and the run orders nothing (it is no newer than any
// other run, and not the set's last one), for create, prune and status alike.
func (e Entry) Ahead(now time.Time) bool { return e.Started().After(now.Add(skew)) }

// Scan lists the runs in st: every file with a default archive name, or such a name plus
// the receipt suffix. Other files are not the set's and are not listed. A set that does not
// exist yet is empty. The entries are sorted oldest first.
func Scan(ctx context.Context, st Store) ([]Entry, error) {
	files, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Object, len(files))
	var names []string
	for _, f := range files {
		byName[f.Name] = f
		name := strings.TrimSuffix(f.Name, format.ReceiptSuffix)
		if _, _, ok := parseName(name); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		o, ok := byName[name]
		e := inspectObject(ctx, st, name, o, ok)
		if !ok && e.Receipt != nil && e.Receipt.Archive != nil {
			// An archive the listing left out may be there all the same (a bucket's index
			// lagging behind its objects): judged gone, its run would lose its receipt to
			// prune and leave the archive alone. Missing is what a look at it says.
			e = inspect(ctx, st, name)
		}
		if _, listed := byName[name+format.ReceiptSuffix]; listed && e.receiptMissing && gone(ctx, st, name) {
			continue // pruned since the listing: no run to show
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		return compareRuns(a.Started(), a.Name, b.Started(), b.Name)
	})
	return entries, nil
}

// gone says whether the archive called name is missing now. A run whose receipt was listed
// but then missing, and whose archive is gone too, was deleted whole while the set was read
// (a prune, which takes no reader's lock): it is no damaged run.
func gone(ctx context.Context, st Store, name string) bool {
	_, err := st.Stat(ctx, name)
	return errors.Is(err, fs.ErrNotExist)
}

// inspect reads what st holds under the archive name: the archive's type and size, and its
// receipt, and says what does not match.
func inspect(ctx context.Context, st Store, name string) Entry {
	o, err := st.Stat(ctx, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e := inspectObject(ctx, st, name, Object{}, false)
		e.Problem = firstErr(err, e.Problem)
		e.lookupErr = err
		return e
	}
	return inspectObject(ctx, st, name, o, err == nil)
}

// inspectObject completes the entry of the archive o (found says whether there is one) with
// its receipt.
func inspectObject(ctx context.Context, st Store, name string, o Object, found bool) Entry {
	e := Entry{Name: name, ETag: o.ETag}
	e.Source, _, _ = parseName(name)
	if found {
		e.Archive, e.Size = true, o.Size
		if o.NotRegular != "" {
			e.Problem = fmt.Errorf("the archive is %s", o.NotRegular)
		}
	}
	rc, etag, err := readReceipt(ctx, st, name+format.ReceiptSuffix)
	e.ReceiptETag = etag
	if errors.Is(err, fs.ErrNotExist) {
		e.receiptMissing = true
		err = errors.New("its receipt is missing")
	} else if err != nil {
		err = fmt.Errorf("its receipt cannot be read: %w", err)
	}
	if err != nil {
		e.Problem = firstErr(e.Problem, err)
		return e
	}
	e.Receipt = rc
	e.Problem = firstErr(e.Problem, e.Receipt.MatchListed(e.Name, e.Archive, e.Size))
	return e
}

// readReceipt reads and parses the receipt called name, and returns its ETag.
func readReceipt(ctx context.Context, st Store, name string) (*format.Receipt, string, error) {
	data, etag, err := st.ReadFile(ctx, name, format.MaxReceiptSize)
	if err != nil {
		return nil, "", err
	}
	rc, err := format.ParseReceipt(name, data)
	return rc, etag, err
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
