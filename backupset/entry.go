package backupset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"backup/atomicfile"
	"backup/report"
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
	Receipt *report.Receipt // nil when missing or unreadable
	Problem error           // why the entry is Unknown; nil otherwise
}

// State classifies the entry from its receipt and the files present.
func (e Entry) State() State {
	switch {
	case e.Problem != nil:
		return Unknown
	case !e.Archive && e.Receipt.Status == report.Failed && e.Receipt.Archive == nil:
		return Failed
	case !e.Archive:
		return Gone
	case e.Receipt.Status == report.Complete:
		return Complete
	case e.Receipt.Status == report.Incomplete:
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

// Scan lists the runs in dir: every file with a default archive name, or such a name plus
// the receipt suffix. Other files are not the set's and are not listed. A missing dir is an
// empty set. The entries are sorted oldest first.
func Scan(dir string) ([]Entry, error) {
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(f.Name(), ReceiptSuffix)
		if _, _, ok := parseName(name); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	entries := make([]Entry, 0, len(names))
	for _, name := range names {
		entries = append(entries, inspect(dir, name))
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		return compareRuns(a.Started(), a.Name, b.Started(), b.Name)
	})
	return entries, nil
}

// inspect reads what dir holds under the archive name: the archive's type and size, and its
// receipt, and says what does not match.
func inspect(dir, name string) Entry {
	e := Entry{Name: name}
	e.Source, _, _ = parseName(name)
	info, err := os.Lstat(filepath.Join(dir, name))
	switch {
	case err == nil:
		e.Archive, e.Size = true, info.Size()
		if !info.Mode().IsRegular() {
			e.Problem = fmt.Errorf("the archive is %s", atomicfile.DescribeType(info.Mode()))
		}
	case !errors.Is(err, fs.ErrNotExist):
		e.Problem = err
	}
	rc, err := report.ReadReceipt(filepath.Join(dir, name+ReceiptSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("its receipt is missing")
	} else if err != nil {
		err = fmt.Errorf("its receipt cannot be read: %w", err)
	}
	if err != nil {
		e.Problem = firstErr(e.Problem, err)
		return e
	}
	e.Receipt = rc
	e.Problem = firstErr(e.Problem, matchReceipt(e))
	return e
}

// matchReceipt checks that the receipt describes the archive at the entry's name.
func matchReceipt(e Entry) error {
	a := e.Receipt.Archive
	switch {
	case a == nil && e.Archive:
		return errors.New("its receipt says no archive was written")
	case a == nil:
		return nil
	case filepath.Base(a.Path) != e.Name:
		return fmt.Errorf("its receipt describes another archive, %s", filepath.Base(a.Path))
	case e.Archive && a.Size != e.Size:
		return fmt.Errorf("its receipt says %d bytes, the archive has %d", a.Size, e.Size)
	}
	return nil
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
