package backupset

import (
	"context"
	"errors"
	"fmt"

	"backup/atomicfile"
	"backup/format"
)

// Prune applies p to the set and deletes what the plan does not keep, each archive together
// with its receipt (the archive first: a receipt left alone by a crash is a Gone entry that
// the next prune removes, while an archive left without its receipt would be Unknown and
// kept forever). With dryRun it only plans. It reads LATEST as every reader does and refuses
// to prune, deleting nothing, when the pointer cannot be trusted. An empty set is no error.
//
// The decisions are returned in the set's order (oldest first). With an error, which names
// the file that could not be deleted, only the decisions carried out are returned: the
// last of them marked ReceiptLeft when its archive was deleted and its receipt was not.
func (l *Lock) Prune(ctx context.Context, p Policy, dryRun bool) ([]Decision, error) {
	return l.PruneInto(ctx, p, dryRun, nil)
}

// PruneInto is Prune, except that with an attic the runs it does not keep are moved into
// it (see Attic) instead of being deleted.
func (l *Lock) PruneInto(ctx context.Context, p Policy, dryRun bool, attic *Attic) ([]Decision, error) {
	latest, err := Latest(ctx, l.store)
	if errors.Is(err, ErrNoBackup) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("not pruning: %w", err)
	}
	entries, err := Scan(ctx, l.store)
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(entries))
	for i, e := range entries {
		runs[i] = Run{Name: e.Name, Source: e.Source, Started: e.Started(), State: e.State(), Problem: e.Problem}
	}
	plan := Plan(runs, latest.Name, p)
	if dryRun {
		return plan, nil
	}
	remove := l.remove
	if attic != nil {
		attic.sweep()
		defer attic.done()
		remove = func(ctx context.Context, e Entry) error { return attic.take(ctx, l.store, e) }
	}
	for i, d := range plan {
		if d.Keep {
			continue
		}
		if err := ctx.Err(); err != nil {
			return plan[:i], fmt.Errorf("stopped before %s: %w", d.Name, err)
		}
		if d.Name == latest.Name || d.State == Unknown {
			// Plan never does this; a bug there must not cost a backup.
			return plan[:i], fmt.Errorf("internal error: the plan deletes %s (%s); nothing more deleted", d.Name, d.State)
		}
		if err := remove(ctx, entries[i]); err != nil {
			var left *ReceiptLeftError
			if errors.As(err, &left) {
				plan[i].ReceiptLeft = true
				return plan[:i+1], err
			}
			if errors.As(err, new(*MovedError)) { // out of the set all the same
				return plan[:i+1], err
			}
			return plan[:i], err
		}
	}
	if f, ok := l.store.(Folder); ok {
		return plan, atomicfile.SyncDir(f.Dir)
	}
	return plan, nil
}

// remove deletes an archive and then its receipt, either of which may be missing already,
// each only while it is what the plan judged (its ETag as read): one a writer replaced since
// is kept, and the error says so.
func (l *Lock) remove(ctx context.Context, e Entry) error {
	if e.Archive {
		if err := l.store.Delete(ctx, e.Name, e.ETag); err != nil {
			return err
		}
	}
	if e.Receipt == nil {
		return nil
	}
	err := l.store.Delete(ctx, e.Name+format.ReceiptSuffix, e.ReceiptETag)
	if err != nil && e.Archive {
		return &ReceiptLeftError{Name: e.Name, Err: err}
	}
	return err
}

// ReceiptLeftError is a prune's error when it deleted a run's archive but not its receipt:
// the run has left the set (status shows it gone) and is counted as deleted (as moved, when
// the archive went into the attic).
type ReceiptLeftError struct {
	Name  string // the archive's
	Err   error  // why the receipt stays
	Attic bool   // the archive was moved into the attic, not deleted
}

func (e *ReceiptLeftError) Error() string {
	if e.Attic {
		return fmt.Sprintf("moved %s to the attic, but its receipt stays in the set (the next prune moves it): %v", format.QuoteName(e.Name), e.Err)
	}
	return fmt.Sprintf("deleted %s, but not its receipt (the next prune removes it): %v", format.QuoteName(e.Name), e.Err)
}

// Unwrap returns why the receipt stays.
func (e *ReceiptLeftError) Unwrap() error { return e.Err }
