package backupset

import (
	"context"
	"fmt"
	"time"

	"backup/format"
)

// Status is what backup status shows of a set: its runs and the archive LATEST names.
type Status struct {
	Entries []Entry // oldest first
	// Latest is the LATEST target; nil when LatestErr says why it cannot be trusted
	// (ErrNoBackup for an empty set).
	Latest    *Entry
	LatestErr error
	// Newer is the newest complete backup of LATEST's source when it is newer than LATEST's
	// target (a rollback, or a run whose LATEST move failed); nil otherwise.
	Newer *Entry
	// Activation records that LATEST's target was chosen by hand; nil when a create run
	// chose it.
	Activation *Activation
}

// ReadStatus reads the set in st. Its error is for a set that cannot be listed; a pointer
// that cannot be trusted is reported in Status.LatestErr.
//
// No lock is taken (status runs while backups run): when LATEST's target is found wrong
// but LATEST has moved since it was read, or LATEST moved while the runs were listed, a run
// moved it (and may have pruned the runs listed), and the whole set is read again, at most
// rereads times, so that the runs listed and LATEST are of one moment.
func ReadStatus(ctx context.Context, st Store) (*Status, error) {
	for try := 0; ; try++ {
		before, _, _ := readPointer(ctx, st)
		entries, err := Scan(ctx, st)
		if err != nil {
			return nil, err
		}
		s := &Status{Entries: entries}
		name, latest, err := latestOnce(ctx, st)
		if try < rereads && ctx.Err() == nil && (name != before || err != nil && moved(ctx, st, name)) {
			continue
		}
		if err != nil {
			s.LatestErr = err
		} else {
			s.Latest = &latest
			s.Newer = newerComplete(entries, latest, time.Now())
			s.Activation = readActivation(ctx, st, latest.Name)
		}
		return s, nil
	}
}

// newerComplete returns the newest complete entry of latest's source if it sorts after
// latest, else nil. entries are oldest first. A run dated ahead of now is passed over: it
// is not newer, only made with a wrong clock.
func newerComplete(entries []Entry, latest Entry, now time.Time) *Entry {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Name == latest.Name {
			return nil
		}
		if e.Source == latest.Source && e.State() == Complete && !e.Ahead(now) {
			return &entries[i]
		}
	}
	return nil
}

// skew is how far in the future a start time may be before a clock problem is suspected.
const skew = time.Minute

// Check says why the set is not healthy at now, or nil: LATEST must be trustworthy and,
// when maxAge is positive, name a complete backup that started less than maxAge ago. A
// backup dated in the future is not healthy either: its age cannot be known.
func (s *Status) Check(now time.Time, maxAge time.Duration) error {
	if s.LatestErr != nil {
		return s.LatestErr
	}
	if maxAge <= 0 {
		return nil
	}
	rc := s.Latest.Receipt
	age := now.Sub(rc.StartedAt)
	switch {
	case rc.Status != format.Complete:
		return fmt.Errorf("LATEST %s is %s", format.QuoteName(s.Latest.Name), rc.Status)
	case age < -skew:
		return fmt.Errorf("LATEST %s started in the future (%s), check the clock", format.QuoteName(s.Latest.Name), rc.StartedAt.Format(time.RFC3339))
	case age > maxAge:
		return fmt.Errorf("LATEST %s is %s old, older than %s", format.QuoteName(s.Latest.Name), format.FormatDuration(age), format.FormatDuration(maxAge))
	}
	return nil
}
