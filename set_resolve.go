package main

import (
	"context"
	"os"
	"path/filepath"

	"backup/backupset"
)

// resolveArchive returns the archive an ARCHIVE argument names: the path itself, or, for a
// backup set folder, the archive its LATEST names, failing closed (never "the newest file").
// verify, list and restore take their ARCHIVE through it, so that `backup restore DIR DEST`
// restores the set's LATEST backup.
func resolveArchive(arg string) (string, error) {
	info, err := os.Stat(arg)
	if err != nil || !info.IsDir() {
		return arg, nil // the command's own open reports a missing or unreadable archive
	}
	e, err := backupset.Latest(context.Background(), backupset.Folder{Dir: arg})
	if err != nil {
		return "", err
	}
	return filepath.Join(arg, e.Name), nil
}
