package backupset

import (
	"regexp"
	"time"
)

// File names inside a set folder.
const (
	// LatestName is the pointer to the archive that restore, verify and list use.
	LatestName = "LATEST"
	// LockName is the file the set's flock is held on.
	LockName = ".backup.lock"
	// ReceiptSuffix follows an archive's name to name its receipt.
	ReceiptSuffix = ".receipt.json"
)

// archiveName matches the default archive names of backup create:
// <name>-<YYYYMMDDTHHMMSSZ>.zip, or with -2, -3… when that name was taken.
var archiveName = regexp.MustCompile(`^(.+)-([0-9]{8}T[0-9]{6}Z)(-[1-9][0-9]*)?\.zip$`)

// parseName splits a default archive name into the source's name and the time in it.
func parseName(file string) (name string, stamp time.Time, ok bool) {
	m := archiveName.FindStringSubmatch(file)
	if m == nil {
		return "", time.Time{}, false
	}
	stamp, err := time.Parse("20060102T150405Z", m[2])
	if err != nil {
		return "", time.Time{}, false
	}
	return m[1], stamp, true
}

// SourceOf returns the source's name at the front of a default archive name, or "" when
// name is not one.
func SourceOf(name string) string {
	source, _, _ := parseName(name)
	return source
}
