package backupset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"backup/format"
)

// Found is a set found below a location that holds sets (backup sets LOCATION).
type Found struct {
	// Dir is the set's folder below the location, "/"-separated; "" for the location itself.
	Dir string
	// Files are the set's files as the one listing of the location gave them, named within
	// the set.
	Files []Object
}

// FindSets groups a listing of every file below a location (names "/"-separated and
// relative to it) into the sets it holds, sorted by Dir. A folder is a set when it holds
// LATEST or the set's lock, which every run into a folder set creates first and leaves;
// with byRuns, also when it holds a run's archive or receipt: in a bucket the lock object
// lives only while a run holds it, and only create --output-dir writes runs there, so a set
// whose runs all failed is still found. (In a folder, archives without a lock are an attic or
// the output of create -o, not a set.)
func FindSets(files []Object, byRuns bool) []Found {
	byDir := map[string][]Object{}
	for _, f := range files {
		dir, name := path.Split(f.Name)
		f.Name = name
		byDir[strings.TrimSuffix(dir, "/")] = append(byDir[strings.TrimSuffix(dir, "/")], f)
	}
	var found []Found
	for dir, files := range byDir {
		if isSet(files, byRuns) {
			found = append(found, Found{Dir: dir, Files: files})
		}
	}
	slices.SortFunc(found, func(a, b Found) int { return cmp.Compare(a.Dir, b.Dir) })
	return found
}

func isSet(files []Object, byRuns bool) bool { return SetMarker(files, byRuns) != "" }

// SetMarker names the file of a folder's listing that makes the folder a set, as FindSets
// judges it (LATEST or the lock file; with byRuns, a run's archive or receipt too), or "".
func SetMarker(files []Object, byRuns bool) string {
	for _, f := range files {
		if f.Name == LatestName || f.Name == LockName || byRuns && isRunFile(f.Name) {
			return f.Name
		}
	}
	return ""
}

// isRunFile says whether name is a run's archive or receipt by its name.
func isRunFile(name string) bool {
	_, _, ok := parseName(strings.TrimSuffix(name, format.ReceiptSuffix))
	return ok
}

// Overview is what backup sets shows of one set: its runs as a listing shows them, and the
// archive LATEST names.
type Overview struct {
	// Runs counts the runs the listing shows: each default archive name once, whether its
	// archive, its receipt or both are there.
	Runs int
	// Latest is LATEST's target; nil when LatestErr says why it cannot be trusted
	// (ErrNoBackup for a set with no backup yet).
	Latest    *Entry
	LatestErr error
}

// Overlook reads the set in st whose files a listing gave, the cheap way: LATEST and the
// receipt of the archive it names are read (two small reads), everything else comes from
// the listing. No archive and no other receipt is read, no lock is taken, nothing is
// written: a monitor may call it on every set of a fleet while their runs go on. LATEST is
// checked as every reader checks it (see Latest), and read again when it moved while being
// read; an archive that LATEST names but the listing lacks (a run that moved LATEST after
// the listing) is looked up in st.
func Overlook(ctx context.Context, st Store, files []Object) Overview {
	ls := listed{Store: st, files: make(map[string]Object, len(files))}
	names := map[string]bool{}
	for _, f := range files {
		ls.files[f.Name] = f
		if isRunFile(f.Name) {
			names[strings.TrimSuffix(f.Name, format.ReceiptSuffix)] = true
		}
	}
	o := Overview{Runs: len(names)}
	if _, ok := ls.files[LatestName]; !ok {
		o.LatestErr = noPointer(st, o.Runs)
		return o
	}
	for try := 0; ; try++ {
		name, _, err := readPointer(ctx, ls)
		if errors.Is(err, errNoPointer) {
			err = noPointer(st, o.Runs) // removed since the listing
		}
		var e Entry
		if err == nil {
			e, err = target(ctx, ls, name)
		}
		if err == nil {
			o.Latest = &e
			return o
		}
		// A target found wrong because a run moved LATEST (and pruned the old target) since
		// it was read says nothing about the set: the new one is read, as Latest does.
		if try == rereads || !moved(ctx, st, name) {
			o.LatestErr = err
			return o
		}
	}
}

// noPointer is the error of a set without LATEST that holds runs runs: Latest's, without
// reading them.
func noPointer(st Store, runs int) error {
	if runs == 0 {
		return ErrNoBackup
	}
	return latestError(st, fmt.Errorf("is missing, but the set holds %s (no backup was activated, or the pointer was lost)", format.Plural(runs, "run", "runs")))
}

// listed is a store whose List and Stat answer from a listing made before, so that reading
// a set of a fleet costs no request of its own beyond its small reads. A name the listing
// lacks is asked of the store: it may have been written since.
type listed struct {
	Store
	files map[string]Object
}

func (l listed) List(context.Context) ([]Object, error) {
	objs := make([]Object, 0, len(l.files))
	for _, o := range l.files {
		objs = append(objs, o)
	}
	return objs, nil
}

func (l listed) Stat(ctx context.Context, name string) (Object, error) {
	if o, ok := l.files[name]; ok {
		return o, nil
	}
	return l.Store.Stat(ctx, name)
}
