package format

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ManifestName is the name of the archive's last entry.
const ManifestName = ".backup-manifest.json"

// ManifestSchema names the version of the manifest's format that backup writes: v2 adds
// owners, extended attributes, hard-link groups, directories and symlinks to v1; v3 adds
// Databases and no longer writes each file's RawSHA256 (see docs/formats.md).
const ManifestSchema = "backup.manifest/v3"

// ManifestSchemaV2 is the second version, which readers still accept.
const ManifestSchemaV2 = "backup.manifest/v2"

// ManifestSchemaV1 is the first version, which readers still accept: files without owners.
const ManifestSchemaV1 = "backup.manifest/v1"

// Manifest is the content of the manifest entry: enough to verify the archive with nothing
// but the archive.
type Manifest struct {
	Schema      string    `json:"schema"`
	ToolVersion string    `json:"tool_version"`
	Status      string    `json:"status"`
	Files       []File    `json:"files"`
	Dirs        []Dir     `json:"dirs,omitempty"`     // v2
	Symlinks    []Symlink `json:"symlinks,omitempty"` // v2
	// Compression is the setting the files were compressed with; v2.
	Compression *Compression `json:"compression,omitempty"`
	Skipped     []Skipped    `json:"skipped"`
	Excluded    []Excluded   `json:"excluded"`
	Warnings    []Warning    `json:"warnings"`
	// Created is set in the before-state of a restore only: the paths that restore created,
	// which restoring the before-state removes. Optional, so the schema stays v2.
	Created []Created `json:"created,omitempty"`
	// Replaced is set in the before-state of a restore only: for each file that restore
	// replaces, the file it writes there (type "file", size, SHA-256) or the symlink (type
	// "symlink", target). Restoring the before-state puts back the file it saved only where
	// the destination still holds that one (or the saved one): a file changed since, or one
	// the restore left as it was, is the user's. Optional, as Created is.
	Replaced []Created `json:"replaced,omitempty"`
	// Databases is DatabasesSQLite when the run looked at every file it read for an SQLite
	// database (and stored those it found as snapshots): a later run need not open a file
	// unchanged since to ask again. "" when it did not look; v3.
	Databases string `json:"databases,omitempty"`
	// notes sums up the notes of a manifest read without them (see Notes); nil otherwise.
	notes *Notes
}

// File is one stored file: its stored name, size in bytes and SHA-256 in hex; in v2 its
// owner (and attributes), and the hard-link group it belongs to; for a file stored as a
// consistent copy made from it (a database snapshot), what it was copied from.
type File struct {
	Path   string
	Size   int64
	SHA256 Digest
	// Link numbers the file's hard-link group: files of one run with the same device and
	// inode share a number (each entry still holds the data). 0: not linked.
	Link     int
	Meta     *Meta       // nil in a v1 manifest
	Snapshot *CopySource // nil unless the entry is a snapshot
	// RawSHA256 is the SHA-256 of the entry's compressed bytes, as v2 recorded it; read,
	// never written (reuse proves a reference's bytes by its whole SHA-256 instead). nil
	// when not recorded: a pointer, so that a File of a v3 manifest is 24 bytes smaller
	// (a million of them are held by a run and by verify).
	RawSHA256 *Digest
	// Reused says the entry was copied from the reference; not in the manifest.
	Reused bool
}

// Dir is one stored directory with its owner (and attributes); v2 only.
type Dir struct {
	Path string
	Meta Meta
}

// Symlink is one stored symlink: its target, as readlink gives it, and its owner; v2 only.
type Symlink struct {
	Path   string
	Target string
	Meta   Meta
}

// DatabasesSQLite is Manifest.Databases of a run that looked for SQLite databases.
const DatabasesSQLite = "sqlite"

// Skipped is a path that was not archived on purpose because it is not a regular file.
type Skipped struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Excluded is a path left out by a rule: a user pattern, CACHEDIR.TAG, one-file-system or self.
type Excluded struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

// Warning is a path that met a problem. Lost says whether data is missing from the archive.
type Warning struct {
	Path  string `json:"path"`
	Op    string `json:"op"`
	Error string `json:"error"`
	Lost  bool   `json:"lost"`
}

// MaxManifestSize is the largest manifest a reader accepts, in bytes: about three million
// files. A hostile archive could otherwise make the reader hold any amount in memory.
const MaxManifestSize = 512 << 20

// MaxManifestRecord is the largest record of a manifest's lists, or value of its other
// fields, a reader accepts, in bytes of JSON. None that backup writes comes near it (a name
// is at most 64 KiB, a file's attributes at most walker.MaxXattrsSize), and a reader holds one
// record at a time: so a small archive whose manifest inflates into one huge record (a
// path of 400 MB took 3 GB to list) is refused in little memory.
const MaxManifestRecord = 16 << 20

var errRecordTooLarge = fmt.Errorf("a record of more than %d bytes", MaxManifestRecord)

// Within is what a reader knows of the archive a manifest is read from, and what it holds.
type Within struct {
	// Entries is how many entries the archive has besides the manifest; NoEntryLimit for a
	// manifest read from no archive, which may list any number of files, folders and
	// symlinks.
	Entries int
	// Notes holds the records of what was skipped, excluded and warned about, which only a
	// listing shows. Without it each is checked as it is read and let go: the Manifest has
	// none.
	Notes bool
}

// NoEntryLimit is Within.Entries for a manifest read from no archive.
const NoEntryLimit = -1

// ParseManifest reads a manifest strictly: the schema must be ManifestSchema, no field may
// be unknown, nothing may follow the JSON, and every file must have a name, a size and a
// well-formed SHA-256, once. It reads at most MaxManifestSize bytes.
func ParseManifest(r io.Reader) (*Manifest, error) {
	return parseManifest(r, MaxManifestSize, Within{Entries: NoEntryLimit, Notes: true})
}

// ParseManifestOf is ParseManifest for the manifest of an archive, as in says. Each of its
// records of a file, folder or symlink names an entry, so far more of them than in.Entries
// is refused as soon as it is read (see nameEntry): a small archive's manifest of tiny
// records ("files": [{}, {}, …]: JSON that deflates a thousandfold) would otherwise be held
// whole, gigabytes, before any check of a record.
func ParseManifestOf(r io.Reader, in Within) (*Manifest, error) {
	return parseManifest(r, MaxManifestSize, in)
}

func parseManifest(r io.Reader, limit int64, in Within) (*Manifest, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	d := newManifestDecoder(lr, in)
	var wire manifestWire
	if err := d.decode(&wire); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("manifest is larger than %d bytes", limit)
		}
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	if err := d.trailing(); err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	return fromWire(&wire)
}

// fromWire is the manifest the decoded wire holds, its records made values and checked.
func fromWire(wire *manifestWire) (*Manifest, error) {
	m, err := wire.Manifest, error(nil)
	// Each list of records is let go once it is values: the check below runs without them
	// (at a million files, 130 MB of records of files).
	m.Files, err = values(wire.Files, fileJSON.value)
	wire.Files = nil
	if err == nil {
		m.Dirs, err = values(wire.Dirs, dirJSON.value)
	}
	if err == nil {
		m.Symlinks, err = values(wire.Symlinks, symlinkJSON.value)
	}
	if err == nil {
		m.Skipped, err = values(wire.Skipped, skippedJSON.value)
		err = cmp.Or(err, wire.dropped[0])
	}
	if err == nil {
		m.Excluded, err = values(wire.Excluded, excludedJSON.value)
		err = cmp.Or(err, wire.dropped[1])
	}
	if err == nil {
		m.Warnings, err = values(wire.Warnings, warningJSON.value)
		err = cmp.Or(err, wire.dropped[2])
	}
	if err == nil && wire.let {
		n := wire.summed.notes()
		m.notes = &n
	}
	if err == nil {
		m.Created, err = values(wire.Created, createdJSON.value)
	}
	if err == nil {
		m.Replaced, err = values(wire.Replaced, replacedValue)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	// The lists the writer leaves out when empty read as none either way, so that a
	// manifest read back equals the one written ("dirs": [] and no "dirs" mean the same).
	m.Dirs, m.Symlinks, m.Created = noneIfEmpty(m.Dirs), noneIfEmpty(m.Symlinks), noneIfEmpty(m.Created)
	m.Replaced = noneIfEmpty(m.Replaced)
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("manifest is not valid: %w", err)
	}
	return &m, nil
}

func noneIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func (m *Manifest) check() error {
	if m.Schema != ManifestSchema && m.Schema != ManifestSchemaV2 && m.Schema != ManifestSchemaV1 {
		return fmt.Errorf("schema %q, want %q, %q or %q", m.Schema, ManifestSchema, ManifestSchemaV2, ManifestSchemaV1)
	}
	if m.Schema == ManifestSchemaV1 && (m.Dirs != nil || m.Symlinks != nil || m.Compression != nil || slices.ContainsFunc(m.Files, hasV2Fields)) {
		return errors.New("owners, links, dirs, symlinks and what reuse compares are v2 fields, in a v1 manifest")
	}
	if m.Schema != ManifestSchema && m.Databases != "" {
		return errors.New("databases is a v3 field, in a manifest of an earlier version")
	}
	if m.Databases != "" && m.Databases != DatabasesSQLite {
		return fmt.Errorf("databases %q, want %q or none", m.Databases, DatabasesSQLite)
	}
	if err := checkStatus(m.Status); err != nil {
		return err
	}
	listed := m.listedBefore()
	for i, f := range m.Files {
		switch {
		case f.Path == "":
			return errors.New("a file has no path")
		case listed(i, f.Path):
			return fmt.Errorf("file %q is listed twice", f.Path)
		case f.Size < 0:
			return fmt.Errorf("file %q has size %d", f.Path, f.Size)
		case f.SHA256.IsZero():
			return fmt.Errorf("file %q has no sha256", f.Path)
		case f.Meta != nil && badNsec(f.Meta):
			return fmt.Errorf("file %q has mtime_nsec %d, not a fraction of a second", f.Path, f.Meta.MtimeNsec)
		}
	}
	for k, l := range m.Symlinks {
		if l.Path == "" || listed(len(m.Files)+k, l.Path) {
			return fmt.Errorf("symlink %q has no path or is listed twice", l.Path)
		}
		if badNsec(&l.Meta) {
			return fmt.Errorf("symlink %q has mtime_nsec %d, not a fraction of a second", l.Path, l.Meta.MtimeNsec)
		}
	}
	if err := m.checkDirs(); err != nil {
		return err
	}
	return m.checkCreated()
}

// checkDirs refuses a directory listed twice: each record gives a mode and an owner, and
// readers would differ on which one a folder gets. backup writes them sorted by path, so
// that a repeat is next to itself; the list of another manifest is sorted in a copy.
func (m *Manifest) checkDirs() error {
	byPath := func(a, b Dir) int { return strings.Compare(a.Path, b.Path) }
	dirs := m.Dirs
	if !slices.IsSortedFunc(dirs, byPath) {
		dirs = slices.SortedFunc(slices.Values(dirs), byPath)
	}
	for i := 1; i < len(dirs); i++ {
		if dirs[i].Path == dirs[i-1].Path {
			return fmt.Errorf("directory %q is listed twice", dirs[i].Path)
		}
	}
	for _, d := range dirs {
		if badNsec(&d.Meta) {
			return fmt.Errorf("directory %q has mtime_nsec %d, not a fraction of a second", d.Path, d.Meta.MtimeNsec)
		}
	}
	return nil
}

// badNsec reports a recorded mtime_nsec that is no fraction of a second, which restore
// would pass over, leaving whole seconds where the record claims more.
func badNsec(m *Meta) bool { return m.MtimeNsec < 0 || m.MtimeNsec >= 1e9 }

// checkCreated refuses a created path (what restoring this before-state removes) that is
// also one of its files, symlinks or dirs (what it puts back): a restore would write or keep
// the path and then remove it. A before-state never lists both: what the restore created
// was not there before it.
func (m *Manifest) checkCreated() error {
	if len(m.Created) == 0 {
		return nil
	}
	kept := make(map[string]bool, len(m.Files)+len(m.Symlinks)+len(m.Dirs))
	for _, f := range m.Files {
		kept[f.Path] = true
	}
	for _, l := range m.Symlinks {
		kept[l.Path] = true
	}
	for _, d := range m.Dirs {
		kept[d.Path] = true
	}
	for _, c := range m.Created {
		if kept[c.Path] {
			return fmt.Errorf("created %q is also listed as put back", c.Path)
		}
	}
	return nil
}

// listedBefore returns a function saying whether the i'th path of the files followed by the
// symlinks is also a path before it; it is asked of each in turn. backup writes both lists
// sorted by path, and then no map of every name is made (50 MB at a million files): a
// repeat is next to itself, or for a symlink found among the files by binary search. The
// lists of other manifests get the map.
func (m *Manifest) listedBefore() func(i int, path string) bool {
	if slices.IsSortedFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) }) &&
		slices.IsSortedFunc(m.Symlinks, func(a, b Symlink) int { return strings.Compare(a.Path, b.Path) }) {
		return func(i int, path string) bool {
			if i < len(m.Files) {
				return i > 0 && m.Files[i-1].Path == path
			}
			k := i - len(m.Files)
			return hasFile(m.Files, path) || k > 0 && m.Symlinks[k-1].Path == path
		}
	}
	seen := make(map[string]bool, len(m.Files))
	return func(_ int, path string) bool {
		if seen[path] {
			return true
		}
		seen[path] = true
		return false
	}
}

// CheckWritten is ParseManifest's check for a manifest whose lists are sorted by path, as
// backup writes them, done without a map of every name: a name listed twice is next to
// itself. A read-back holds the manifest a run wrote to it.
func (m *Manifest) CheckWritten() error {
	if err := checkStatus(m.Status); err != nil {
		return err
	}
	for i, f := range m.Files {
		switch {
		case f.Path == "":
			return errors.New("a file has no path")
		case i > 0 && m.Files[i-1].Path >= f.Path:
			return fmt.Errorf("file %q is listed twice, or out of order", f.Path)
		case f.Size < 0:
			return fmt.Errorf("file %q has size %d", f.Path, f.Size)
		case f.SHA256.IsZero():
			return fmt.Errorf("file %q has no sha256", f.Path)
		}
	}
	for i, l := range m.Symlinks {
		if l.Path == "" || i > 0 && m.Symlinks[i-1].Path >= l.Path || hasFile(m.Files, l.Path) {
			return fmt.Errorf("symlink %q has no path, is listed twice, or is out of order", l.Path)
		}
	}
	if !slices.IsSortedFunc(m.Dirs, func(a, b Dir) int { return strings.Compare(a.Path, b.Path) }) {
		return errors.New("directories out of order")
	}
	return nil
}

// hasFile reports whether files, sorted by path, lists name.
func hasFile(files []File, name string) bool {
	_, ok := slices.BinarySearchFunc(files, name, func(f File, name string) int { return strings.Compare(f.Path, name) })
	return ok
}

// checkStatus says why s is no status a manifest may record: a failed run writes no archive.
func checkStatus(s string) error {
	if Status(s) != Complete && Status(s) != Incomplete {
		return fmt.Errorf("status %q, want %s or %s", s, Complete, Incomplete)
	}
	return nil
}

// hasV2Fields says whether f holds what only v2 and later record: an owner (Meta), a link
// group, or the raw_sha256 that reuse compared. A snapshot is not one: backup wrote it in
// v1 manifests too (13721b1, before v2).
func hasV2Fields(f File) bool { return f.Meta != nil || f.Link != 0 || f.RawSHA256 != nil }

func isHexSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
