package backupset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"backup/atomicfile"
)

// Prune applies p to the set and deletes what the plan does not keep, each archive together
// with its receipt (the archive first: a receipt left alone by a crash is a Gone entry that
// the next prune removes, while an archive left without its receipt would be Unknown and
// kept forever). With dryRun it only plans. It reads LATEST as every reader does and refuses
// to prune, deleting nothing, when the pointer cannot be trusted. An empty set is no error.
//
// The decisions are returned in the set's order (oldest first). With an error, which names
// the file that could not be deleted, only the decisions carried out are returned.
func (l *Lock) Prune(p Policy, dryRun bool) ([]Decision, error) {
	latest, err := Latest(l.dir)
	if errors.Is(err, ErrNoBackup) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("not pruning: %w", err)
	}
	entries, err := Scan(l.dir)
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(entries))
	for i, e := range entries {
		runs[i] = Run{Name: e.Name, Source: e.Source, Started: e.Started(), State: e.State()}
	}
	plan := Plan(runs, latest.Name, p)
	if dryRun {
		return plan, nil
	}
	for i, d := range plan {
		if d.Keep {
			continue
		}
		if d.Name == latest.Name || d.State == Unknown {
			// Plan never does this; a bug there must not cost a backup.
			return plan[:i], fmt.Errorf("internal error: the plan deletes %s (%s); nothing more deleted", d.Name, d.State)
		}
		if err := l.remove(d.Name); err != nil {
			return plan[:i], err
		}
	}
	return plan, atomicfile.SyncDir(l.dir)
}

// remove deletes an archive and then its receipt, either of which may be missing already.
func (l *Lock) remove(name string) error {
	for _, file := range []string{name, name + ReceiptSuffix} {
		err := os.Remove(filepath.Join(l.dir, file))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
