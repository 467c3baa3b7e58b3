package backupset

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"backup/atomicfile"
	"backup/report"
)

// ErrNoBackup is the error of a reader of a set that holds no archive and no LATEST yet.
var ErrNoBackup = errors.New("no backup in this set yet")

// maxPointer bounds how much of LATEST is read: one archive name and a newline.
const maxPointer = 4096

// Latest resolves dir's LATEST pointer to its archive, failing closed: any doubt about the
// pointer or its target is an error naming the problem (as an *fs.PathError on LATEST), and
// another archive is never picked instead. The error is a *LatestError, or ErrNoBackup for
// a set that holds neither LATEST nor any archive.
func Latest(dir string) (Entry, error) {
	name, err := readPointer(dir)
	if errors.Is(err, errNoPointer) {
		return Entry{}, missingPointer(dir)
	}
	if err != nil {
		return Entry{}, err
	}
	e := inspect(dir, name)
	if err := checkTarget(e); err != nil {
		return e, latestError(dir, fmt.Errorf("names %s: %w", name, err))
	}
	return e, nil
}

// checkTarget refuses a LATEST target that is missing, not a regular file, or whose receipt
// is unreadable, does not match it, or records a failed run.
func checkTarget(e Entry) error {
	if !e.Archive {
		return errors.New("the archive is missing")
	}
	if e.Problem != nil {
		return e.Problem
	}
	if e.Receipt.Status != report.Complete && e.Receipt.Status != report.Incomplete {
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

func latestError(dir string, err error) error {
	return &LatestError{Path: filepath.Join(dir, LatestName), Err: err}
}

// errNoPointer is readPointer's error when there is no LATEST at all.
var errNoPointer = errors.New("no LATEST")

// readPointer reads and checks LATEST's one line, and returns the archive name in it.
func readPointer(dir string) (string, error) {
	path := filepath.Join(dir, LatestName)
	data, err := atomicfile.ReadRegular(path, maxPointer)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errNoPointer
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "", latestError(dir, pe.Err)
	}
	if err != nil {
		return "", latestError(dir, err)
	}
	name, err := parsePointer(data)
	if err != nil {
		return "", latestError(dir, err)
	}
	return name, nil
}

// missingPointer is the error for a set without LATEST: only create may start a set, and a
// set that has archives but no pointer has lost it, or never had a complete backup.
func missingPointer(dir string) error {
	entries, err := Scan(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return ErrNoBackup
	}
	return latestError(dir, fmt.Errorf("is missing, but the set holds %d runs (no backup was activated, or the pointer was lost)", len(entries)))
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

// Verifier checks that the archive at path is whole, by reading it back; backup verify's
// check.
type Verifier func(path string) error

// Activate points LATEST at the archive name in the set, once it is verified: its receipt
// matches it and records a complete run (or an incomplete one, when allowIncomplete says so),
// and verify reads it back without error. LATEST is replaced atomically (temp file, fsync,
// rename, folder fsync), so a crash leaves it on the previous archive or on this one.
func (l *Lock) Activate(name string, allowIncomplete bool, verify Verifier) error {
	e := inspect(l.dir, name)
	if err := checkTarget(e); err != nil {
		return fmt.Errorf("not activating %s: %w", name, err)
	}
	if e.Receipt.Status != report.Complete && !allowIncomplete {
		return fmt.Errorf("not activating %s: the backup is %s", name, e.Receipt.Status)
	}
	if err := verify(filepath.Join(l.dir, name)); err != nil {
		return fmt.Errorf("not activating %s: %w", name, err)
	}
	return atomicfile.WriteFile(filepath.Join(l.dir, LatestName), []byte(name+"\n"), 0o644)
}

// PointerName returns the archive name LATEST holds, after checking only the pointer itself,
// not its target; "" when there is no LATEST. Create uses it to keep one source per set.
func PointerName(dir string) (string, error) {
	name, err := readPointer(dir)
	if errors.Is(err, errNoPointer) {
		return "", nil
	}
	return name, err
}
