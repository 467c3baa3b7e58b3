package backupset

import (
	"context"
	"os"
	"path/filepath"
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
		if err := eintr.Remove(filepath.Join(f.Dir, e.Name())); err != nil {
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
	if strings.HasPrefix(name, atomicfile.SpoolPrefix) {
		return true
	}
	base, _, ok := strings.Cut(strings.TrimPrefix(name, "."), atomicfile.TempInfix)
	if !ok || !strings.HasPrefix(name, ".") {
		return false
	}
	_, _, isArchive := parseName(strings.TrimSuffix(base, format.ReceiptSuffix))
	return isArchive || base == LatestName || base == ActivationName
}
