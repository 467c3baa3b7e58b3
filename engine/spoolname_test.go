package engine

import "testing"

// TestIsSpoolName: rule self takes only the names a run makes for its spools and staged
// snapshots (and SQLite's sidecars beside one), not a user's file that begins the same way.
func TestIsSpoolName(t *testing.T) {
	for name, want := range map[string]bool{
		".backup-spool-1234567890":            true,
		".backup-spool-sqlite-42":             true,
		".backup-spool-sqlite-42-journal":     true,
		".backup-spool-sqlite-42-wal":         true,
		".backup-spool-notes":                 false,
		".backup-spool-":                      false,
		".backup-spool-sqlite-":               false,
		".backup-spool-12345678901":           false,
		".backup-spool-sqlite-4a":             false,
		".backup-spool-sqlite-42.bak":         false,
		"backup-spool-42":                     false,
		".backup-spool-sqlite-42-journal-wal": false,
		".backup-spool-sqlite-sqlite-42":      false,
	} {
		if got := isSpoolName(name); got != want {
			t.Errorf("isSpoolName(%q) = %v, want %v", name, got, want)
		}
	}
}
