package restore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"backup/archive"
	"backup/eintr"
	"backup/format"
	"backup/skiprules"
)

// Options configure a restore. The zero value restores every entry and replaces
// nothing that exists.
type Options struct {
	// Force lets restored files replace what is at their path in the destination (the name
	// is replaced, never written through). Directories are never replaced, nor FIFOs,
	// devices and sockets (which a before-state cannot hold) unless NoUndo.
	Force bool
	// NoUndo says that no before-state is written: Force may then replace FIFOs, devices
	// and sockets too.
	NoUndo bool
	// Include, when set, selects entries by stored name (without a directory's slash). An
	// entry is selected when it matches or a directory above it does; the directories above
	// a selected entry are restored with it.
	Include func(name string, isDir bool) bool
	// SkipSymlinks leaves out the symlinks a backup stored (they are listed in Skipped);
	// otherwise they are created, never followed.
	SkipSymlinks bool
	// As root, the owners a v2 manifest records are restored: by name where this system
	// knows the name, else by number. NumericOwner uses the numbers only; NoSameOwner
	// restores no owner. Other users never restore owners.
	NumericOwner, NoSameOwner bool
	// SamePermissions restores setuid, setgid and sticky bits, together with the owner they
	// belong to (so as root only); without it they are dropped, but for a folder's sticky
	// bit, which is always restored.
	SamePermissions bool
	// Xattrs sets the extended attributes (and ACLs) the manifest records.
	Xattrs bool
	// Jobs is how many entries Run restores at once; 0 means one per CPU.
	Jobs int
	// SetMarker names the file that makes the folder open as its descriptor a backup set's
	// (its LATEST, its lock file), or "": only the set's commands write into one, under its
	// lock, so NewPlan fails with a *SetFolderError when a folder of DEST the restore would
	// pass through is one. Nil: no folder is checked.
	SetMarker func(dfd int) string
	// Lock, when it holds DEST's descriptor (LockDest), is the folder NewPlan reads and Run
	// writes into, whatever DEST's path leads to by then; nil: DEST is opened by its path.
	Lock *DestLock
}

// Plan is a restore checked against the archive and the destination before
// anything is written. Run carries it out when OK says it may.
type Plan struct {
	// Dest is the destination folder.
	Dest string
	// Refused lists what makes the restore unsafe or impossible, whatever Force says: unsafe
	// names, paths through a symlink or a file in the destination, and a file where the
	// destination has a directory or the reverse.
	Refused []archive.Problem
	// Conflicts lists the files that exist already at their path in the destination, other
	// than with the recorded content.
	Conflicts []string
	// Present and PresentBytes count the files the destination holds already with the
	// recorded content (size and SHA-256): Run keeps them, with or without Force. FixUps
	// lists those of them (and the folders) whose owner, mode or mtime Run sets.
	Present      int
	PresentBytes int64
	FixUps       []string
	// Removes lists the paths the archive's manifest records as created by a restore (it is
	// that restore's before-state) that the destination holds: Run removes those that still
	// hold what that restore wrote.
	Removes []string
	// Skipped lists the selected special entries (symlinks, devices…) that are not created.
	Skipped []format.Skipped
	// Damaged lists the selected entries that verify would report before their data are
	// written (see checkEntries), then the files, folders and symlinks the manifest records that the archive lacks,
	// and the entries it does not account for: special entries, and directories stored after
	// it. None of them is restored.
	Damaged []archive.Problem
	// Files, Dirs, Symlinks and Bytes count what is to be restored.
	Files, Dirs, Symlinks int
	Bytes                 int64
	// Selected counts the entries, and the manifest's records the archive lacks, that
	// Include selects, whatever becomes of them: an entry selected and found damaged is a
	// match, reported as damage, not a selection that matched nothing.
	Selected int

	r        *archive.Reader
	opts     Options
	tree     *destTree                 // the destination's folders while the plan is made; nil after, or without DEST
	entries  []*archive.Entry          // selected files and directories, in archive order
	dirs     map[string]*archive.Entry // selected directory entries by name
	index    *format.Index             // the manifest's records; nil without a manifest
	owners   ownerIDs
	linked   map[int][]string  // the files of each hard-link group that Run wrote, by group
	warnings []archive.Problem // what Run restored less faithfully than recorded
	// linkat is eintr.Linkat; tests make it fail, as another file system below DEST would.
	linkat   func(olddirfd int, oldpath string, newdirfd int, newpath string, flags int, linking eintr.ID) error
	matched  map[string]bool      // Include's answers for directories
	existing map[string]destState // what dest holds, by name
	through  map[string]bool      // the folders dest holds that the plan passes through
	present  map[string]bool      // the files dest holds already; true: their metadata differ
	fixDirs  map[string]bool      // the folders dest holds already with other metadata
	touched  map[string]bool      // the folders Run wrote into (their mtime changed)
	creates  []*archive.Entry     // the selected entries dest has nothing at
	// replaces holds, for each conflict, the identity of what the plan saw at its path: the
	// one thing Force may replace there (the before-state saved it), never what took its
	// place since.
	replaces map[string]nodeID
	// placed holds the identity of each file of a hard-link group Run put in place or
	// kept, for relink: it replaces that file and nothing else.
	placed map[string]nodeID
	// kept holds the files of a hard-link group that Run kept as already present: the
	// user's, which relink never replaces by a link.
	kept map[string]bool
	// handles holds the file handle (inode number and generation) of each file of a
	// hard-link group Run wrote, where the file system gives one: once this run's descriptor
	// is closed, a new file can get the freed inode number and, made in the same clock tick,
	// the same ctime, but not the same generation (attack pass 17).
	handles map[string]string
	remove  []format.Created // the Removes' records
	// replacedWith holds, in a before-state's plan, what the restore it undoes wrote over
	// each file it replaced (Manifest.Replaced), by path; left the entries leftSince
	// leaves out.
	replacedWith map[string]format.Created
	left         map[string]bool
	entryNames   map[string]bool // every entry's name, once holds asks (see sweep)
	umask        fs.FileMode     // the process's, read when Run starts
	asRoot       bool            // whether the process runs as root, asked once (owner)
	ctx          context.Context // stops the plan's reading of DEST
	written      atomic.Int64
	done         atomic.Int64
	// While Run's workers run (see workers.go), mu guards touched, placed, handles, linked,
	// warnings and owners, and stopped is closed when a worker meets an error that stops the
	// run. pos is each entry's place in archive order, by which merge puts back the lists of
	// more than one worker, made only when something needs sorting.
	mu       sync.Mutex
	pos      map[string]int
	stopped  chan struct{}
	stopOnce sync.Once
}

// destState is what the destination holds at one path: its type, or nothing (missing), or
// the error that stopped lstat from telling.
type destState struct {
	missing bool
	mode    fs.FileMode
	id      nodeID // what is there (device, inode, type, ctime)
	nlink   uint64 // its names
	err     error
}

// NewPlan checks a restore of r into dest, writing nothing. It fails when r's manifest is
// unreadable (the files could not be checked) or dest exists and is not a folder. It stops
// when ctx is done, and then returns ctx's error: the plan reads every file DEST holds at
// an entry's path to tell whether it is present, which takes long on a large DEST.
func NewPlan(ctx context.Context, r *archive.Reader, dest string, opts Options) (*Plan, error) {
	if r.ManifestErr != nil {
		return nil, fmt.Errorf("%s: %w", format.ManifestName, r.ManifestErr)
	}
	p := &Plan{Dest: dest, r: r, opts: opts, dirs: map[string]*archive.Entry{}, matched: map[string]bool{},
		existing: map[string]destState{}, through: map[string]bool{}, present: map[string]bool{},
		fixDirs: map[string]bool{}, touched: map[string]bool{}, linked: map[int][]string{}, linkat: eintr.Linkat,
		replaces: map[string]nodeID{}, placed: map[string]nodeID{}, kept: map[string]bool{}, handles: map[string]string{}, ctx: ctx}
	if !opts.Lock.held() {
		if info, err := os.Stat(dest); err == nil && !info.IsDir() {
			return nil, &fs.PathError{Op: "restore", Path: dest, Err: errors.New("not a directory")}
		} else if errors.Is(err, fs.ErrNotExist) {
			p.existing[""] = destState{missing: true}
		} else if err != nil {
			return nil, err
		}
	}
	if !p.existing[""].missing {
		// What the plan reads of the destination, it reads relative to folder descriptors
		// opened without following a link, as Run writes: never through a swapped folder;
		// the folder locked, when it is, as it is the one Run writes into.
		var err error
		if p.tree, err = openDestTree(dest, nil, opts.Lock); err != nil {
			return nil, err
		}
		defer func() { p.tree.close(); p.tree = nil }()
	}
	p.umask = currentUmask() // for what isPresent compares
	p.asRoot = os.Geteuid() == 0
	p.Refused = archive.CheckNames(r.Entries)
	if len(p.Refused) > 0 {
		return p, nil
	}
	if r.Manifest != nil {
		p.index = format.NewIndex(r.Manifest)
		p.noteReplaced(r.Manifest.Replaced)
	}
	p.selectEntries()
	if err := p.checkEntries(); err != nil {
		return nil, err
	}
	p.checkManifest()
	for _, e := range p.entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.checkDest(e)
	}
	p.dropLeft(p.left)
	p.checkCreated()
	p.dropSplitsUndone()
	if err := p.checkSets(); err != nil {
		return nil, err
	}
	if err := p.checkHolder(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // a hash cut short said "not present": the plan is not to be used
	}
	return p, nil
}

// OK reports whether Run may go ahead: nothing refused, and no conflicts unless forced.
func (p *Plan) OK() bool {
	return len(p.Refused) == 0 && (p.opts.Force || len(p.Conflicts) == 0)
}

// BytesWritten and FilesDone count what Run has restored so far; safe to poll from any
// goroutine, for a progress bar.
func (p *Plan) BytesWritten() int64 { return p.written.Load() }

// FilesDone is how many files Run has restored so far; safe to poll from any goroutine.
func (p *Plan) FilesDone() int64 { return p.done.Load() }

// Writes says whether Run would write, or keep as present, a file or symlink at name (a
// path below DEST, with slashes), or remove what is there (the undo of a restore removes
// what that restore created).
func (p *Plan) Writes(name string) bool {
	for _, e := range p.entries {
		if !e.IsDir && e.Name == name {
			return true
		}
	}
	for _, c := range p.remove {
		if c.Path == name {
			return true
		}
	}
	return false
}

func (p *Plan) selectEntries() {
	entries := p.r.Entries
	picked := make([]bool, len(entries))
	needed := map[string]bool{} // directories above a selected entry
	for i, e := range entries {
		if e.IsRoot() || !p.included(e) {
			continue // DEST is the user's: unzip and Python's zipfile leave it as it is
		}
		picked[i] = true
		p.Selected++
		for dir := parentOf(e.Name); dir != "" && !needed[dir]; dir = parentOf(dir) {
			needed[dir] = true
		}
	}
	for i, e := range entries {
		if picked[i] || e.IsDir && needed[e.Name] {
			p.add(e)
		}
	}
}

func (p *Plan) add(e *archive.Entry) {
	// In a backup's archive: an entry that is not what the manifest records (a special entry
	// it does not list, a directory stored after it, another size, mode or owner), checked
	// before the plan looks in DEST, so that a file DEST holds already is not kept, its
	// owner and mode set from a record that verify calls damaged.
	if err := p.r.CheckRecord(e); err != nil {
		p.Damaged = append(p.Damaged, archive.Problem{Entry: e.StoredName(), Reason: err.Error()})
		return
	}
	stored := p.storedSymlink(e)
	switch {
	case stored && p.opts.SkipSymlinks:
		p.Skipped = append(p.Skipped, format.Skipped{Path: e.Name, Kind: string(e.Kind)})
		return
	case stored:
		p.Symlinks++
	case e.Kind != "":
		p.Skipped = append(p.Skipped, format.Skipped{Path: e.Name, Kind: string(e.Kind)})
		return
	case e.IsDir:
		p.dirs[e.Name] = e
		p.Dirs++
	default:
		p.Files++
		p.Bytes += e.Size
	}
	p.entries = append(p.entries, e)
}

// storedSymlink reports whether e is a symlink that backup stored (the manifest lists it):
// one restore creates. Those of other tools are listed, not created.
func (p *Plan) storedSymlink(e *archive.Entry) bool {
	if e.Kind != skiprules.KindSymlink || p.index == nil {
		return false
	}
	_, ok := p.index.Symlink(e.Name)
	return ok
}

// included reports whether e or a directory above it matches Include. The answers for
// directories are cached: every entry below one asks again.
func (p *Plan) included(e *archive.Entry) bool {
	if p.opts.Include == nil {
		return true
	}
	for i := strings.IndexByte(e.Name, '/'); i >= 0; i = nextSlash(e.Name, i) {
		dir := e.Name[:i]
		m, ok := p.matched[dir]
		if !ok {
			m = p.opts.Include(dir, true)
			p.matched[dir] = m
		}
		if m {
			return true
		}
	}
	return p.opts.Include(e.Name, e.IsDir)
}

// nextSlash returns the index of the first slash in s after i; -1 when there is none.
func nextSlash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func parentOf(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// checkManifest lists the selected files that the manifest records and the archive lacks.
func (p *Plan) checkManifest() {
	m := p.r.Manifest
	if m == nil {
		return
	}
	// Each record is looked for among the entries of its kind, as verify does: a folder the
	// manifest records is not in the archive as a file of its name. A record of a name no
	// entry may have (app/x/, ../x) is missing all the same.
	type key struct{ name, typ string } // typ as Entry.Type names it
	present := make(map[key]bool, len(p.r.Entries))
	for _, e := range p.r.Entries {
		present[key{e.Name, e.Type()}] = true
	}
	for _, f := range m.Files {
		if present[key{f.Path, "file"}] {
			continue
		}
		if p.included(&archive.Entry{Name: f.Path}) {
			p.Selected++
			p.Damaged = append(p.Damaged, archive.Problem{Entry: f.Path, Reason: "in the manifest but missing from the archive"})
		}
	}
	// The folders and symlinks a v2 manifest records are entries of the archive too: one
	// missing is damage, as verify says, not a restore that is complete without it.
	for _, d := range m.Dirs {
		if present[key{d.Path, "dir"}] {
			continue
		}
		if p.included(&archive.Entry{Name: d.Path, IsDir: true}) {
			p.Selected++
			p.Damaged = append(p.Damaged, archive.Problem{Entry: d.Path + "/", Reason: "directory in the manifest but missing from the archive"})
		}
	}
	for _, l := range m.Symlinks {
		if present[key{l.Path, string(skiprules.KindSymlink)}] {
			continue
		}
		if p.included(&archive.Entry{Name: l.Path}) {
			p.Selected++
			p.Damaged = append(p.Damaged, archive.Problem{Entry: l.Path, Reason: "symlink in the manifest but missing from the archive"})
		}
	}
}
