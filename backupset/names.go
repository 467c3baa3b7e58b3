package backupset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backup/format"
)

// File names inside a set folder.
const (
	// LatestName is the pointer to the archive that restore, verify and list use.
	LatestName = "LATEST"
	// LockName is the file the set's flock is held on.
	LockName = ".backup.lock"
)

// archiveName matches the default archive names that ArchiveName makes:
// <name>-<YYYYMMDDTHHMMSSZ>.zip, or with -2, -3… when that name was taken.
// A name with a slash is never one: it would be a file of another folder (another set).
var archiveName = regexp.MustCompile(`^([^/\n]+)-([0-9]{8}T[0-9]{6}Z)(-[1-9][0-9]*)?\.zip$`)

// sealedName matches the default names of encrypted archives: <YYYYMMDDTHHMMSSZ>.zip.age, or
// with -2, -3…. They hold no source's name, which would tell anyone who can list the set
// (a bucket's readers) what it backs up. Its groups are archiveName's, the first empty.
var sealedName = regexp.MustCompile(`^()([0-9]{8}T[0-9]{6}Z)(-[1-9][0-9]*)?\.zip\.age$`)

// SealedSuffix ends the default name of an encrypted archive.
const SealedSuffix = ".zip.age"

// matchName matches file against both kinds of default name: nil, or archiveName's groups.
func matchName(file string) []string {
	if strings.HasSuffix(file, SealedSuffix) {
		return sealedName.FindStringSubmatch(file)
	}
	return archiveName.FindStringSubmatch(file)
}

// stampLayout is the UTC time in a default archive name.
const stampLayout = "20060102T150405Z"

// ArchiveName is the default file name of the n-th run (from 1) of source that started in
// the second of started: <source>-<YYYYMMDDTHHMMSSZ>.zip, then -2, -3…. An encrypted
// archive's name holds no source: source Sealed gives <YYYYMMDDTHHMMSSZ>.zip.age, -2….
// Names are written and parsed here alone, so that the names create gives are the ones a
// set recognises.
func ArchiveName(source string, started time.Time, n int) string {
	stem := started.UTC().Format(stampLayout)
	if source != Sealed {
		stem = source + "-" + stem
	}
	if n > 1 {
		stem += "-" + strconv.Itoa(n)
	}
	if source == Sealed {
		return stem + SealedSuffix
	}
	return stem + ".zip"
}

// Sealed is the source of every encrypted archive's name (ArchiveName, SourceOf): none. The
// encrypted archives of a set are one series, whatever they hold; which source that is only
// their manifests, inside the encryption, say.
const Sealed = ""

// IsSealedName reports whether name is the default name of an encrypted archive.
func IsSealedName(name string) bool {
	return sealedName.MatchString(name)
}

// IsArchiveName reports whether name is a default archive name, plain or encrypted.
func IsArchiveName(name string) bool {
	_, _, ok := parseName(name)
	return ok
}

// CheckSourceName says why name cannot name a set's archives, or nil. The name is the front
// of every archive name of the set (see ArchiveName), so it must make names that LATEST can
// hold (see parsePointer) and that read back as the same source: "..", "a..b" or a name
// holding a newline would make archives that no reader could ever be pointed at. Nor may it
// be other than UTF-8: a receipt records its archive's name as JSON text, which would hold
// U+FFFD for such bytes, and name another archive than the one it describes.
func CheckSourceName(name string) error {
	file := ArchiveName(name, time.Unix(0, 0), 1)
	if !utf8.ValidString(name) {
		return fmt.Errorf("%q cannot name a set's archives (it is not UTF-8, and a receipt records its archive's name as UTF-8 text)", name)
	}
	if name != "." {
		if got, err := parsePointer([]byte(file)); err == nil && SourceOf(got) == name {
			return nil
		}
	}
	return fmt.Errorf("%q cannot name a set's archives (LATEST cannot hold %q)", name, file)
}

// NextRun is the run number (for ArchiveName) of a new run of source that started in the
// second of started, given the file names in its folder: one past the highest that any
// archive or receipt of that second holds. So a name that prune freed is not taken again by
// a later run, which would then sort before the runs it followed.
func NextRun(names []string, source string, started time.Time) int {
	second := started.UTC().Truncate(time.Second)
	next := 1
	for _, name := range names {
		name = strings.TrimSuffix(name, format.ReceiptSuffix)
		if src, stamp, ok := parseName(name); ok && src == source && stamp.Equal(second) {
			next = max(next, runNumber(name)+1)
		}
	}
	return next
}

// FreeName is the default name (ArchiveName) of a new run of source that started at started,
// in the store st: past every run of that second that st lists (NextRun), and past any name
// whose archive or receipt is there all the same. It is the one picker of every place a run
// names its archive: a set in a folder or a bucket, a plain folder, a before-state's folder.
func FreeName(ctx context.Context, st Store, source string, started time.Time) (string, error) {
	files, err := st.List(ctx)
	if err != nil {
		return "", err
	}
	names := make([]string, len(files))
	for i, o := range files {
		names[i] = o.Name
	}
	for n := NextRun(names, source, started); ; n++ {
		name := ArchiveName(source, started, n)
		free, err := isFree(ctx, st, name)
		switch {
		case err != nil:
			return "", err
		case free:
			return name, nil
		}
	}
}

// FirstFree is the first default name of a run of source that started at started whose
// archive and receipt are both absent from st, each looked up by name: the picker for a
// store that cannot be listed (a write-only folder, an entry whose lstat fails), which
// cannot order the run past the others of its second but never takes a used name. A name
// whose lookup fails (an I/O error) may be used, and is passed over; only when the lookups
// of maxLookupFailures names in a row fail is the first of them given: writing it will say
// what is wrong.
func FirstFree(ctx context.Context, st Store, source string, started time.Time) string {
	failed := ""
	for n, fails := 1, 0; ; n++ {
		name := ArchiveName(source, started, n)
		free, err := isFree(ctx, st, name)
		switch {
		case free:
			return name
		case err == nil:
			fails = 0
			continue
		case failed == "":
			failed = name
		}
		if fails++; fails == maxLookupFailures {
			return failed
		}
	}
}

// maxLookupFailures bounds the names FirstFree passes over because their lookups failed.
const maxLookupFailures = 16

// isFree says whether neither the archive name nor its receipt is in st.
func isFree(ctx context.Context, st Store, name string) (bool, error) {
	for _, file := range []string{name, name + format.ReceiptSuffix} {
		_, err := st.Stat(ctx, file)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return true, nil
}

// parseName splits a default archive name into the source's name (Sealed for an encrypted
// archive's) and the time in it.
func parseName(file string) (name string, stamp time.Time, ok bool) {
	m := matchName(file)
	if m == nil {
		return "", time.Time{}, false
	}
	stamp, err := time.Parse(stampLayout, m[2])
	if err != nil {
		return "", time.Time{}, false
	}
	return m[1], stamp, true
}

// SourceOf returns the source's name at the front of a default archive name, or "" when
// name is not one, or is an encrypted archive's (which names none: see IsArchiveName).
func SourceOf(name string) string {
	source, _, _ := parseName(name)
	return source
}

// runNumber is the count that a default name's -2, -3… suffix gives the runs that started
// in one second: 1 for the name without a suffix, which was taken first.
func runNumber(file string) int {
	m := matchName(file)
	if m == nil || m[3] == "" {
		return 1
	}
	n, err := strconv.Atoi(m[3][1:])
	if err != nil {
		return 1
	}
	return n
}

// compareRuns orders runs oldest first: by start time, then by the suffix that numbers the
// runs of one second (X, X-2, X-3, X-10: receipts keep whole seconds, and the bytes of the
// names sort X-10 before X-2 and X last), then by name.
func compareRuns(aStarted time.Time, aName string, bStarted time.Time, bName string) int {
	if c := aStarted.Compare(bStarted); c != 0 {
		return c
	}
	if c := cmp.Compare(runNumber(aName), runNumber(bName)); c != 0 {
		return c
	}
	return strings.Compare(aName, bName)
}
