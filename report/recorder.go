package report

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"backup/archive"
	"backup/format"
	"backup/skiprules"
)

// Policy says which warnings make a run incomplete besides those that lost data.
type Policy struct {
	// Strict counts every warning as lost.
	Strict bool
	// FailOn counts warnings with these ops (FailOnOps) as lost.
	FailOn []string
}

// Recorder collects what became of every path. Its methods are safe for concurrent use.
type Recorder struct {
	policy Policy
	events *Events   // hears of each skipped, excluded and warned path; may be nil
	list   io.Writer // -v: each stored path, one a line; may be nil

	mu          sync.Mutex
	files       []format.File
	copies      map[string]format.CopySource // told by Copy, waiting for File
	snaps       int
	dirs        []format.Dir
	symlinks    []format.Symlink
	bytes       int64
	reused      int // files copied from the reference
	reusedBytes int64
	skipped     []format.Skipped
	excluded    []format.Excluded
	warnings    []format.Warning
}

// NewRecorder returns an empty Recorder applying policy.
func NewRecorder(policy Policy) *Recorder {
	return &Recorder{policy: policy}
}

// Tell makes the Recorder pass on what it records as it happens: each skipped, excluded and
// warned path to events (--json-lines), and each stored path to list, one a line, a
// directory's with a trailing slash (-v). Either may be nil. Call it before recording.
func (r *Recorder) Tell(events *Events, list io.Writer) {
	r.events, r.list = events, list
}

// Dir records a directory stored in the archive.
func (r *Recorder) Dir(d format.Dir) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs = append(r.dirs, d)
	if r.list != nil {
		io.WriteString(r.list, format.QuoteName(d.Path+"/")+"\n")
	}
}

// Symlink records a symlink stored in the archive.
func (r *Recorder) Symlink(l format.Symlink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.symlinks = append(r.symlinks, l)
	if r.list != nil {
		io.WriteString(r.list, format.QuoteName(l.Path)+"\n")
	}
}

// Expect makes the list of files long enough for n at once: a million-file list grown as
// files come holds its old array and a new one, a quarter larger, as it grows (200 MB).
func (r *Recorder) Expect(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files = format.GrowFiles(r.files, n-len(r.files))
}

// File records a file stored in the archive.
func (r *Recorder) File(f format.File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if src, ok := r.copies[f.Path]; ok {
		f.Snapshot = &src
		delete(r.copies, f.Path)
	}
	r.files = append(r.files, f)
	r.bytes += f.Size
	if f.Reused {
		r.reused++
		r.reusedBytes += f.Size
	}
	if r.list != nil {
		io.WriteString(r.list, format.QuoteName(f.Path)+"\n")
	}
}

// Copy records that the file name, recorded next by File, is stored as a snapshot made from
// it (or, in a dry run, would be).
func (r *Recorder) Copy(name string, src format.CopySource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.copies == nil {
		r.copies = map[string]format.CopySource{}
	}
	r.copies[name] = src
	r.snaps++
}

// Skip records a path that is not a regular file.
func (r *Recorder) Skip(name string, kind skiprules.Kind) {
	s := format.Skipped{Path: name, Kind: string(kind)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped = append(r.skipped, s)
	r.events.Emit("skipped", s)
}

// Exclude records a path left out by rule.
func (r *Recorder) Exclude(name, rule string) {
	x := format.Excluded{Path: name, Rule: rule}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.excluded = append(r.excluded, x)
	r.events.Emit("excluded", x)
}

// Warn records a problem with one path: an *fs.PathError whose Path is the stored name, as
// the walker and the archiver report them.
func (r *Recorder) Warn(err error) {
	w := r.classify(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, w)
	r.events.Emit("warning", w)
}

func (r *Recorder) classify(err error) format.Warning {
	w := format.Warning{Op: format.OpError, Error: err.Error()}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		w.Path, w.Op, w.Error = pe.Path, pe.Op, pe.Err.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.Op = format.OpVanished
	case errors.Is(err, archive.ErrChanged):
		w.Op = format.OpChanged
	}
	w.Lost = r.counts(w.Op)
	return w
}

// counts reports whether a warning with op makes the run incomplete.
func (r *Recorder) counts(op string) bool {
	switch op {
	case format.OpVanished, format.OpChanged, format.OpStat:
		return r.policy.Strict || slices.Contains(r.policy.FailOn, op)
	case format.OpReuse: // the file was read instead: the reference was damaged, not the data
		return r.policy.Strict
	}
	return true // open, read, readdir: the data is not in the archive
}

// Status is complete unless a warning counts as lost.
func (r *Recorder) Status() format.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status()
}

func (r *Recorder) status() format.Status {
	for _, w := range r.warnings {
		if w.Lost {
			return format.Incomplete
		}
	}
	return format.Complete
}

// Manifest returns the archive's manifest: what the run stored, skipped, excluded and
// warned about, sorted by path.
func (r *Recorder) Manifest(toolVersion string) *format.Manifest {
	m, _ := r.snapshot(true)
	m.ToolVersion = toolVersion
	return m
}

// snapshot sorts what was collected and copies it, with the counts; the file list, only
// when withFiles, is shared (see below): a receipt only counts it.
func (r *Recorder) snapshot(withFiles bool) (*format.Manifest, format.Counts) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if withFiles {
		slices.SortFunc(r.files, func(a, b format.File) int { return strings.Compare(a.Path, b.Path) })
		slices.SortFunc(r.dirs, func(a, b format.Dir) int { return strings.Compare(a.Path, b.Path) })
		slices.SortFunc(r.symlinks, func(a, b format.Symlink) int { return strings.Compare(a.Path, b.Path) })
	}
	groups := numberLinks(r.files)
	slices.SortFunc(r.skipped, func(a, b format.Skipped) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(r.excluded, func(a, b format.Excluded) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(r.warnings, func(a, b format.Warning) int { return strings.Compare(a.Path, b.Path) })
	m := &format.Manifest{
		Status:   string(r.status()),
		Skipped:  cloneList(r.skipped),
		Excluded: cloneList(r.excluded),
		Warnings: cloneList(r.warnings),
	}
	if withFiles {
		// The manifest shares the file list rather than copying it: at a million files
		// that is the one large part, and nothing is recorded once the manifest is asked
		// for (the archive is whole by then).
		m.Files = r.files
		if m.Files == nil {
			m.Files = []format.File{}
		}
		m.Dirs = cloneList(r.dirs)
		m.Symlinks = cloneList(r.symlinks)
	}
	c := format.Counts{Files: len(r.files), Dirs: len(r.dirs), Symlinks: len(r.symlinks), LinkGroups: groups,
		Bytes: r.bytes, Reused: r.reused, ReusedBytes: r.reusedBytes, Skipped: len(r.skipped), Excluded: len(r.excluded),
		Warnings: len(r.warnings), Snapshots: r.snaps}
	for _, w := range r.warnings {
		if w.Lost {
			c.Lost++
		}
	}
	return m, c
}

// numberLinks numbers the hard-link groups of files, in the order of their first member,
// and returns how many there are. A group of which one file only was stored (its other
// links are outside the sources, or were lost) is no group: its file's Link is 0.
func numberLinks(files []format.File) int {
	members := map[int]int{}
	for _, f := range files {
		if f.Link != 0 {
			members[f.Link]++
		}
	}
	renumber := map[int]int{}
	for i := range files {
		f := &files[i]
		if f.Link == 0 {
			continue
		}
		if members[f.Link] < 2 {
			f.Link = 0
			continue
		}
		n, ok := renumber[f.Link]
		if !ok {
			n = len(renumber) + 1
			renumber[f.Link] = n
		}
		f.Link = n
	}
	return len(renumber)
}

// cloneList copies s, never returning nil: the JSON says [] for an empty list, not null.
func cloneList[T any](s []T) []T {
	return append(make([]T, 0, len(s)), s...)
}
