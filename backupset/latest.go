package backupset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"backup/format"
)

// ErrNoBackup is the error of a reader of a set that holds no archive and no LATEST yet.
var ErrNoBackup = errors.New("no backup in this set yet")

// maxPointer bounds how much of LATEST is read: one archive name and a newline.
const maxPointer = 4096

// Latest resolves dir's LATEST pointer to its archive, failing closed: any doubt about the
// pointer or its target is an error naming the problem (as an *fs.PathError on LATEST), and
// another archive is never picked instead. The error is a *LatestError, or ErrNoBackup for
// a set that holds neither LATEST nor any archive.
//
// No lock is taken: a run may move LATEST and prune its old target between the read of the
// pointer and that of the target. A target found wrong is therefore reported only when
// LATEST, read again, still names it (see moved); otherwise the new target is read, at most
// rereads times.
func Latest(ctx context.Context, st Store) (Entry, error) {
	for try := 0; ; try++ {
		name, e, err := latestOnce(ctx, st)
		if err == nil || try == rereads || !moved(ctx, st, name) {
			return e, err
		}
	}
}

// latestOnce is one reading of LATEST and its target; it returns the name LATEST held, ""
// when it held none that reads.
func latestOnce(ctx context.Context, st Store) (string, Entry, error) {
	name, _, err := readPointer(ctx, st)
	if errors.Is(err, errNoPointer) {
		return "", Entry{}, missingPointer(ctx, st)
	}
	if err != nil {
		return "", Entry{}, err
	}
	e, err := target(ctx, st, name)
	return name, e, err
}

// rereads bounds how often a reader that found LATEST's target wrong reads it again because
// the pointer moved meanwhile: each time, a run moved LATEST within the reader's two reads.
const rereads = 3

// Moved says whether LATEST, read again, names an archive other than name: a reader that
// resolved name with Latest and then found it gone (pruned once a run moved LATEST on) reads
// the set again, instead of reporting a healthy set as damaged.
func Moved(ctx context.Context, st Store, name string) bool {
	return moved(ctx, st, name)
}

// moved says whether LATEST, read again, names an archive other than name: a run moved it
// since name was read, and what was found wrong with name's target (pruned by that run, say)
// says nothing about the set. A pointer that did not read (name "") is its own damage, not
// its target's, and a pointer that no longer reads has not moved anywhere: the first
// reading's error stands.
func moved(ctx context.Context, st Store, name string) bool {
	if name == "" {
		return false
	}
	now, _, err := readPointer(ctx, st)
	return err == nil && now != name && ctx.Err() == nil
}

// target reads the entry of name, which LATEST holds, and says why it cannot be LATEST's
// target.
func target(ctx context.Context, st Store, name string) (Entry, error) {
	e := inspect(ctx, st, name)
	if err := checkTarget(e); err != nil {
		return e, latestError(st, fmt.Errorf("names %s: %w", format.QuoteName(name), err))
	}
	return e, nil
}

// checkTarget refuses a LATEST target that is missing (or cannot be looked up), not a
// regular file, or whose receipt is unreadable, does not match it, or records a failed run.
func checkTarget(e Entry) error {
	if !e.Archive && e.lookupErr != nil {
		return e.lookupErr // not known to be missing: the lookup failed
	}
	if !e.Archive {
		return errors.New("the archive is missing")
	}
	if e.Problem != nil {
		return e.Problem
	}
	if e.Receipt.Status != format.Complete && e.Receipt.Status != format.Incomplete {
		return fmt.Errorf("its receipt says %s", e.Receipt.Status)
	}
	return nil
}

// LatestError says why a set's LATEST pointer cannot be trusted.
type LatestError struct {
	Path string // the pointer's path
	Err  error
}

func (e *LatestError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *LatestError) Unwrap() error { return e.Err }

func latestError(st Store, err error) error {
	return &LatestError{Path: location(st, LatestName), Err: err}
}

// location names a file of a set in messages.
func location(st Store, name string) string {
	if _, ok := st.(Folder); ok {
		return filepath.Join(st.Location(), name)
	}
	return st.Location() + "/" + name
}

// errNoPointer is readPointer's error when there is no LATEST at all.
var errNoPointer = errors.New("no LATEST")

// readPointer reads and checks LATEST's one line, and returns the archive name in it and
// LATEST's ETag.
func readPointer(ctx context.Context, st Store) (string, string, error) {
	data, etag, err := st.ReadFile(ctx, LatestName, maxPointer)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", errNoPointer
	}
	if err != nil {
		// A damaged pointer (a symlink, a FIFO) is still replaced on the condition that it
		// is the one seen here.
		if o, serr := st.Stat(ctx, LatestName); serr == nil {
			etag = o.ETag
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", etag, latestError(st, err)
	}
	name, err := parsePointer(data)
	if err != nil {
		return "", etag, latestError(st, err)
	}
	return name, etag, nil
}

// missingPointer is the error for a set without LATEST: only create may start a set, and a
// set that has archives but no pointer has lost it, or never had a complete backup.
func missingPointer(ctx context.Context, st Store) error {
	entries, err := Scan(ctx, st)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return ErrNoBackup
	}
	return latestError(st, fmt.Errorf("is missing, but the set holds %s (no backup was activated, or the pointer was lost)", format.Plural(len(entries), "run", "runs")))
}

// parsePointer checks that data is exactly one line holding a default archive name.
func parsePointer(data []byte) (string, error) {
	line, _ := bytes.CutSuffix(data, []byte("\n"))
	s := string(line)
	switch {
	case s == "":
		return "", errors.New("is empty")
	case strings.Contains(s, "\n"):
		return "", errors.New("has more than one line")
	case strings.ContainsRune(s, 0):
		return "", errors.New("holds a NUL byte")
	case strings.Contains(s, "/"):
		return "", fmt.Errorf("names %q, which holds a /", s)
	case strings.Contains(s, ".."):
		return "", fmt.Errorf("names %q, which holds ..", s)
	}
	if _, _, ok := parseName(s); ok {
		return s, nil
	}
	if _, _, ok := parseName(strings.TrimSpace(s)); ok {
		return "", fmt.Errorf("has trailing junk after the name: %q", s)
	}
	return "", fmt.Errorf("names %q, which is not an archive name of a set", s)
}

// Verifier checks that the archive called name in the set is whole, by reading it back;
// backup verify's check.
type Verifier func(name string) error

// Activate points LATEST at the archive name in the set, once it is verified: its receipt
// matches it and records a complete run (or an incomplete one, when allowIncomplete says so),
// and verify reads it back without error. LATEST is replaced only if it still holds what
// was read when the lock was taken (see Lock.Pointer): the store's compare-and-swap, so a
// writer that moved it meanwhile is never overwritten; a missing LATEST is created only if
// still missing. A folder replaces it atomically (temp file, fsync, rename, folder fsync), so
// a crash leaves it on the previous archive or on this one.
//
// Activate never moves LATEST back: an archive whose run started before the run LATEST names
// (by the set's order, see Scan) is refused. Only ActivateByHand may choose an older one.
//
// An error that came before LATEST's write was sent, which therefore did not move it, is
// one NotMoved recognises.
func (l *Lock) Activate(ctx context.Context, name string, allowIncomplete bool, verify Verifier) error {
	e, err := l.CheckActivation(ctx, name, allowIncomplete, verify)
	if err == nil {
		err = l.checkForward(ctx, e)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return &notMovedError{err}
	}
	return l.point(ctx, name)
}

// notMovedError is an error of Activate's before LATEST's write was sent.
type notMovedError struct{ err error }

func (e *notMovedError) Error() string { return e.err.Error() }
func (e *notMovedError) Unwrap() error { return e.err }

// NotMoved says whether err, Activate's, came before LATEST's write was sent: LATEST did
// not move. After a write that failed (a bucket's answer lost to an interrupt, and the look
// after it failing too), whether it moved may not be known.
func NotMoved(err error) bool {
	var e *notMovedError
	return errors.As(err, &e)
}

// checkForward refuses e when LATEST names a run that started after it, by more than a
// clock's skew: a clock set back. Runs closer than that are not ordered by their clocks
// (nor by their names, whose sources and kinds may differ): the one that holds the lock now
// came later. A LATEST that is damaged, whose target is, or that started in the future, is
// replaced as before: it orders nothing.
func (l *Lock) checkForward(ctx context.Context, e Entry) error {
	if !l.pointerRead {
		if _, err := l.Pointer(ctx); err != nil && !isLatestError(err) {
			return err
		}
	}
	if l.pointerName == "" || l.pointerName == e.Name {
		return nil
	}
	cur := inspect(ctx, l.store, l.pointerName)
	// Within the skew status and adopt allow, runs are not ordered by their clocks; and a
	// LATEST dated in the future orders nothing: its machine's clock was wrong.
	if checkTarget(cur) != nil || !cur.Started().After(e.Started().Add(skew)) || cur.Started().After(time.Now().Add(skew)) {
		return nil
	}
	return fmt.Errorf("not activating %s: LATEST names %s, which started later (%s); LATEST never moves back but by backup activate (check the clock)",
		format.QuoteName(e.Name), format.QuoteName(cur.Name), cur.Started().UTC().Format(time.RFC3339))
}

// point replaces LATEST on the condition Activate describes.
func (l *Lock) point(ctx context.Context, name string) error {
	// A folder's Put does not look at ctx: an interrupt that came during the read-back
	// stops the move here, so that "not moved" is what happened.
	if err := ctx.Err(); err != nil {
		return &notMovedError{err}
	}
	if !l.pointerRead {
		if _, err := l.Pointer(ctx); err != nil && !isLatestError(err) {
			return &notMovedError{err}
		}
	}
	if c, ok := l.held.(confirmer); ok {
		if err := c.Confirm(ctx); err != nil {
			return &notMovedError{fmt.Errorf("not activating %s: %w", format.QuoteName(name), err)}
		}
	}
	_, err := l.store.Put(ctx, LatestName, []byte(name+"\n"), l.pointerETag)
	// A bucket's write whose answer never came (an interrupt, or retries that all failed
	// in transit after the server made the first) may have moved LATEST all the same.
	_, remote := l.store.(detacher)
	if err != nil && (ctx.Err() != nil || remote) {
		moved, known := l.movedAnyway(ctx, name)
		if moved {
			return nil
		}
		if known && ctx.Err() != nil {
			// LATEST, read back, still names another archive: the interrupt stopped the
			// write, and the run says so in its receipt, as create's "not moved" does.
			return &notMovedError{err}
		}
	}
	if errors.Is(err, ErrChanged) || errors.Is(err, ErrExists) {
		return latestError(l.store, fmt.Errorf("was moved by another writer while this run held the lock; not activating %s", format.QuoteName(name)))
	}
	return err
}

// movedAnyway says whether LATEST names name after a write of it was cancelled (an
// interrupt): a server may have made the write and its answer never came back, and the run
// must not say LATEST was not moved when it was. known is false when LATEST could not be
// read back. It asks within the cleanup's bound.
func (l *Lock) movedAnyway(ctx context.Context, name string) (moved, known bool) {
	bctx, cancel := bounded(ctx, l.store)
	defer cancel()
	got, _, err := readPointer(bctx, l.store)
	return err == nil && got == name, err == nil
}

// confirmer is a held lock that can say whether it is still this run's (a bucket's lease,
// which another run takes over once it stands unrenewed past its TTL).
type confirmer interface {
	Confirm(ctx context.Context) error
}

// detacher is a store whose requests after an interrupt share a bound of its own (a bucket).
type detacher interface {
	Detached(ctx context.Context) (context.Context, context.CancelFunc)
}

// bounded returns a context for a request that must still be made once ctx is done: the
// store's bound when it has one, else cleanupBound.
func bounded(ctx context.Context, st Store) (context.Context, context.CancelFunc) {
	if d, ok := st.(detacher); ok {
		return d.Detached(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupBound)
}

// cleanupBound bounds a request made after an interrupt, for a store without its own bound.
const cleanupBound = 10 * time.Second

// CheckActivation is what Activate checks before it moves LATEST, and all that a dry run
// does: the archive's entry, its receipt and its status, then verify. It returns the entry.
func (l *Lock) CheckActivation(ctx context.Context, name string, allowIncomplete bool, verify Verifier) (Entry, error) {
	if _, err := parsePointer([]byte(name)); err != nil {
		return Entry{}, fmt.Errorf("not activating %s: not an archive of a set (want SOURCE-YYYYMMDDTHHMMSSZ.zip, or YYYYMMDDTHHMMSSZ.zip.age encrypted)", format.QuoteName(name))
	}
	e := inspect(ctx, l.store, name)
	if err := checkTarget(e); err != nil {
		return e, fmt.Errorf("not activating %s: %w", format.QuoteName(name), err)
	}
	if err := l.checkSource(ctx, nil, e.Source); err != nil {
		return e, fmt.Errorf("not activating %s: %w", format.QuoteName(name), err)
	}
	if e.Receipt.Status != format.Complete && !allowIncomplete {
		return e, fmt.Errorf("not activating %s: the backup is %s", format.QuoteName(name), e.Receipt.Status)
	}
	if err := verify(name); err != nil {
		return e, fmt.Errorf("not activating %s: %w", format.QuoteName(name), err)
	}
	return e, nil
}

func isLatestError(err error) bool {
	var le *LatestError
	return errors.As(err, &le)
}

// Pointer returns the archive name LATEST holds, after checking only the pointer itself,
// not its target; "" when there is no LATEST. Create reads it when it takes the lock, to keep
// one source per set; the ETag read then is the condition Activate moves LATEST on.
func (l *Lock) Pointer(ctx context.Context) (string, error) {
	name, etag, err := readPointer(ctx, l.store)
	l.pointerRead, l.pointerETag = true, etag
	l.pointerName, l.pointerErr = name, err
	if errors.Is(err, errNoPointer) {
		return "", nil
	}
	return name, err
}
