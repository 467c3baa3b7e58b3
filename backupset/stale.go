package backupset

import (
	"context"
	"os"
	"strings"

	"backup/atomicfile"
	"backup/eintr"
	"backup/format"
)

// RemoveStale removes what runs killed before they could clean up left in the set (see
// Store.Clean). Holding the lock is what makes this safe: no other run of this set is
// writing them. It returns the names it removed.
func (l *Lock) RemoveStale(ctx context.Context) ([]string, error) {
	return l.store.Clean(ctx)
}

// Clean removes the temp files of killed runs: archives being written (.NAME.zip.tmp-*),
// staged receipts and pointers (.NAME.tmp-*) and compression spools (.backup-spool-*). Only
// regular files are removed.
func (f Folder) Clean(context.Context) ([]string, error) {
	entries, err := os.ReadDir(f.Dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !isStaleTemp(e.Name()) {
			continue
		}
		if err := eintr.Remove(f.path(e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// isStaleTemp matches only the temp names this tool gives: a dot, then a default archive
// name, its receipt's name or LATEST, then ".tmp-" and a random suffix; or a spool. Any
// other file in the set is never touched.
func isStaleTemp(name string) bool {
	if db, ok := strings.CutSuffix(name, "-journal"); ok && strings.HasPrefix(db, atomicfile.SpoolPrefix) {
		name = db // SQLite's journal beside a staged snapshot (sqlitesnap's hot journal)
	}
	if rest, ok := strings.CutPrefix(name, atomicfile.SpoolPrefix); ok {
		return isRandom(strings.TrimPrefix(rest, "sqlite-"))
	}
	if !atomicfile.IsTempName(name) {
		return false
	}
	base := name[1:strings.LastIndex(name, atomicfile.TempInfix)]
	_, _, isArchive := parseName(strings.TrimSuffix(base, format.ReceiptSuffix))
	return isArchive || base == LatestName || base == ActivationName
}

// isRandom reports whether s is the random number os.CreateTemp puts for a pattern's *
// (eintr.CreateTemp's too): 1 to 10 decimal digits. A file whose name only begins like a
// temp name is the user's.
func isRandom(s string) bool {
	return len(s) > 0 && len(s) <= 10 && strings.Trim(s, "0123456789") == ""
}
