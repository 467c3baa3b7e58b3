package archive

import (
	"archive/zip"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"backup/format"
)

// Reference is an earlier archive of the same sources whose entries of unchanged files a
// Writer copies, compressed bytes and all, instead of reading and compressing the files
// again. It is only read.
//
// It keeps one small record per reusable file, sorted by name, and reads the entries by
// offset through the file: neither Go's zip reader nor the parsed manifest is kept, each of
// which holds hundreds of bytes per file (gigabytes for a million files).
type Reference struct {
	f    *os.File
	size int64
	// zip reads the zip the file holds: f itself, or through ReuseOptions.Unseal when sealed.
	zip       io.ReaderAt
	zipSize   int64
	sealed    bool
	opts      ReuseOptions
	status    string    // as the manifest records it
	databases string    // as the manifest records it
	older     string    // the manifest's schema when it records no compression (see Older)
	files     []refFile // sorted by name
	// names holds the names of files, one after the other: a string each would take 16
	// bytes and an allocation more per file.
	names string
	// entries counts the records of the central directory besides the manifest's.
	entries int
	// damage says why the pass over the reference found an entry unfit to copy, by its
	// index in files: few are, and an error in each record would take 16 bytes.
	damage map[int32]error
	seed   maphash.Seed
	next   format.Hints // where find looks first
}

// refFile is what reuse needs of a file of the reference: what its entry's central record
// and its manifest record say. It is 120 bytes, one per file of the reference, held for
// the whole run (TestRefFileSize).
type refFile struct {
	nameOff   uint32 // where its name is in Reference.names
	nameLen   uint32
	size      int64 // uncompressed, as both the entry and the manifest say
	mtimeSec  int64 // the entry's extended timestamp
	ctime     int64 // Unix nanoseconds
	ino       uint64
	local     int64 // where the entry's local header is
	csize     int64
	mtimeNsec int32 // the manifest's fraction of a second
	crc       uint32
	mode      fs.FileMode
	method    uint16
	flags     uint16
	sha       format.Digest // of the data, as the manifest records it
	// data is where the entry's compressed bytes start, and key their keyed digest, as the
	// pass over the reference found them (see refpass.go); data is 0 until then.
	data int64
	key  uint64
}

// refEntry is a file of the reference that a run copies: its record, and the file and seed
// to read it with.
type refEntry struct {
	refFile
	name   string
	damage error // why the pass found the entry unfit to copy
	ra     io.ReaderAt
	seed   maphash.Seed
}

// OpenReference opens the archive at path as the reference of a run compressing with
// method and level, when it is the archive want describes (its receipt's size and
// SHA-256): the whole file is hashed first (see refsum.go and refpass.go). It fails with
// ErrNotAsRecorded when it is not, and when the archive cannot be read or its manifest is
// missing or damaged; a reference made with other settings, or by a version that did not
// record what reuse compares, gives no entry to reuse (Reusable says how many it gives).
func OpenReference(ctx context.Context, path string, want format.Summary, method format.Method, level int, opts ReuseOptions) (*Reference, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	ref := &Reference{f: f, size: size, opts: opts}
	if err := ref.open(ctx, want, format.Compression{Method: normalMethod(method), Level: level}); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return ref, nil
}

// open reads the reference's records, then proves its bytes are those want describes.
// When its size is not want's, nothing is read: it is another file.
func (ref *Reference) open(ctx context.Context, want format.Summary, comp format.Compression) error {
	if ref.size != want.Size {
		return ErrNotAsRecorded
	}
	rec := &recordingReader{ra: ref.f}
	ref.zip, ref.zipSize = ref.f, ref.size
	var parse io.ReaderAt = rec
	if ref.opts.Unseal != nil {
		// The parse decrypts through rec, so the ranges it records are of the file as
		// stored (the header too), which the hash then checks; the copies decrypt through
		// it as well, once it has stopped recording.
		zra, n, err := ref.opts.Unseal(rec, ref.size)
		if err != nil {
			return err
		}
		if zra != io.ReaderAt(rec) { // Unseal gives a file that is no age file back as is
			ref.zip, ref.zipSize, parse, ref.sealed = zra, n, zra, true
		}
	}
	if ref.sealed {
		if err := ref.read(parse, ref.zipSize, comp); err != nil {
			return err
		}
		return ref.prove(ctx, ref.f, want, rec, rec.reads, nil)
	}
	return ref.readWhileProving(ctx, want, comp, ref.f, rec)
}

// readWhileProving reads a plain reference's records through rec while the pass proves the
// file, reading it through ra. The pass needs the places of the entries, so the central
// directory is read first; the manifest is parsed beside the pass, which waits for the
// parse only where the manifest's entry begins (the end of the file, as backup writes it)
// and checks from there on the ranges it read. So the SHA-256 of the whole file, the
// longest chain of a reusing run's work, starts at once rather than after the parse, with
// the same checks: the parse records every range it reads, and a range before the point the
// pass had reached fails it. The parse's error comes first, as when the two ran one after
// the other.
func (ref *Reference) readWhileProving(ctx context.Context, want format.Summary, comp format.Compression, ra io.ReaderAt, rec *recordingReader) error {
	manifest, err := ref.readCentral(rec, ref.size)
	if err != nil {
		return err
	}
	central := slices.Clone(rec.reads)
	var m *format.Manifest
	var parseErr error
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		m, parseErr = ref.readManifest(rec, manifest)
	}()
	gate := &readGate{off: manifest.local, wait: func() ([]readRecord, bool) {
		<-parsed
		return rec.reads[len(central):], parseErr == nil
	}}
	proveErr := ref.prove(ctx, ra, want, rec, central, gate)
	<-parsed
	if parseErr != nil {
		return parseErr
	}
	overlap := ref.overlapped()
	if !ref.keep(m, comp) || proveErr == nil && !overlap {
		return proveErr
	}
	// The pass keyed files that the manifest then dropped, which the two one after the other
	// never looked at: one whose entry lies past the end failed the pass, one that runs into
	// the next entry made that one damaged. Only a hostile or damaged archive does either;
	// it is proven again, with the files kept only.
	ref.damage = nil
	for i := range ref.files {
		ref.files[i].data, ref.files[i].key = 0, 0
	}
	return ref.prove(ctx, ra, want, rec, rec.reads, nil)
}

// overlapped reports whether the pass found an entry that begins inside the one before.
func (ref *Reference) overlapped() bool {
	for _, d := range ref.damage {
		if d == errOverlap {
			return true
		}
	}
	return false
}

// prove reads the reference once from ra, front to back (see refpass.go): its SHA-256 must be
// want's, and the ranges rec recorded must hold the bytes the parse got from them; on the
// way each file's entry has its headers checked and its compressed bytes digested
// (keyEntry). An encrypted reference's entries are in the zip it decrypts to, so they are
// keyed in a second pass over that zip, once the first has proven the ciphertext: age's
// authentication binds what it decrypts to the ciphertext proven. ErrNotAsRecorded when the
// file is not as recorded; ctx's error when it is cancelled, since a large reference takes
// a while.
func (ref *Reference) prove(ctx context.Context, ra io.ReaderAt, want format.Summary, rec *recordingReader, reads []readRecord, gate *readGate) error {
	slices.SortFunc(reads, byOffset)
	s := newSeqReader(ctx, ra, ref.size, reads, true)
	s.gate = gate
	defer s.stop()
	ref.seed = maphash.MakeSeed() // this run's, never written
	keys := s
	if ref.sealed {
		if err := s.finish(want); err != nil {
			return err
		}
		rec.stopped.Store(true)
		keys = newSeqReader(ctx, ref.zip, ref.zipSize, nil, false)
	}
	order := make([]int32, len(ref.files))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(ref.files[a].local, ref.files[b].local) })
	for _, i := range order {
		damage, err := keys.keyEntry(&ref.files[i], ref.name(i), ref.seed)
		if err != nil {
			return err
		}
		if damage != nil {
			if ref.damage == nil {
				ref.damage = make(map[int32]error)
			}
			ref.damage[i] = damage
		}
	}
	if keys != s {
		return nil
	}
	return s.finish(want)
}

// read fills ref.files from the central directory and the manifest of the zip of size bytes
// read through ra, when the manifest says its files were compressed as comp says.
func (ref *Reference) read(ra io.ReaderAt, size int64, comp format.Compression) error {
	manifest, err := ref.readCentral(ra, size)
	if err != nil {
		return err
	}
	m, err := ref.readManifest(ra, manifest)
	if err != nil {
		return err
	}
	ref.keep(m, comp)
	return nil
}

// keep keeps the files of ref.files that m gave a SHA-256, when m says its files were
// compressed as comp says; none otherwise. What the pass found of the files kept stays
// theirs. It reports whether it dropped any.
func (ref *Reference) keep(m *format.Manifest, comp format.Compression) (dropped bool) {
	ref.status, ref.databases = m.Status, m.Databases
	if m.Compression == nil || *m.Compression != comp {
		dropped = len(ref.files) > 0
		if m.Compression == nil && dropped {
			ref.older = m.Schema
		}
		ref.files, ref.damage = nil, nil
		return dropped
	}
	// Dropped in place: ref.files keeps its array, no second one is made.
	kept := ref.files[:0]
	var damage map[int32]error
	for i, f := range ref.files {
		if f.sha.IsZero() {
			continue
		}
		if d, ok := ref.damage[int32(i)]; ok {
			if damage == nil {
				damage = make(map[int32]error)
			}
			damage[int32(len(kept))] = d
		}
		kept = append(kept, f)
	}
	dropped = len(kept) < len(ref.files)
	clear(ref.files[len(kept):])
	ref.files, ref.damage = kept, damage
	return dropped
}

func normalMethod(m format.Method) format.Method {
	if m == "" {
		return format.Deflate
	}
	return m
}

var errNoZip = errors.New("not a zip archive, or its central directory is damaged")

// readCentral collects the records of the regular files stored before the manifest, sorted
// by name, and returns the manifest's record. A name stored twice gives no record: which
// of the two would the manifest describe?
func (ref *Reference) readCentral(ra io.ReaderAt, size int64) (*centralRecord, error) {
	var manifest *centralRecord
	var manifests int
	var names strings.Builder
	n, room := centralCount(ra, size)
	ref.files = make([]refFile, 0, n)
	// Grown by appending, the names were copied about five times over into fresh pages:
	// a tenth of the page faults of an unchanged set run of the bench corpus.
	names.Grow(room)
	ref.entries = 0
	err := walkCentral(ra, size, func(rec *centralRecord) error {
		ref.entries++
		switch {
		case strings.TrimSuffix(rec.Name, "/") == format.ManifestName:
			ref.entries--
			manifests++
			c := *rec
			c.Extra = slices.Clone(rec.Extra) // rec's is reused; the local header must match it
			manifest = &c
		case manifests == 0 && !strings.HasSuffix(rec.Name, "/") && rec.Mode().IsRegular():
			// Names past 4 GiB of them have no offset: their files are not reused.
			if f, ok := newRefFile(rec); ok && int64(names.Len())+int64(len(rec.Name)) <= math.MaxUint32 {
				f.nameOff, f.nameLen = uint32(names.Len()), uint32(len(rec.Name))
				names.WriteString(rec.Name)
				ref.files = append(ref.files, f)
			}
		}
		return nil
	})
	ref.names = names.String()
	switch {
	case readFailed(err) != nil:
		return nil, err // a read that failed, not damage
	case err != nil:
		return nil, errNoZip
	case manifests == 0:
		return nil, errors.New("no manifest: not made by backup")
	case manifests > 1:
		return nil, errDuplicateName
	}
	if err := notAManifest(&manifest.FileHeader); err != nil {
		return nil, err
	}
	slices.SortFunc(ref.files, func(a, b refFile) int { return strings.Compare(ref.nameOf(&a), ref.nameOf(&b)) })
	ref.files = ref.withoutRepeats(ref.files)
	return manifest, nil
}

// nameOf is the name of f, a record of ref.files; name the name of ref.files[i].
func (ref *Reference) nameOf(f *refFile) string {
	return ref.names[f.nameOff : f.nameOff+f.nameLen]
}

func (ref *Reference) name(i int32) string { return ref.nameOf(&ref.files[i]) }

// find returns the index in ref.files of the file stored as name. The manifest's join and
// the walk ask for names in about the order they sort in (a binary search alone was 8% of
// the CPU time of an unchanged run of the bench corpus, comparing 15 long names per file).
func (ref *Reference) find(name string) (int, bool) {
	i := format.FindSorted(len(ref.files), name, func(i int) string { return ref.name(int32(i)) }, &ref.next)
	return i, i >= 0
}

// withoutRepeats drops the records of every name that sorted files holds more than once.
func (ref *Reference) withoutRepeats(files []refFile) []refFile {
	out := files[:0]
	for i := 0; i < len(files); {
		j := i + 1
		for j < len(files) && ref.nameOf(&files[j]) == ref.nameOf(&files[i]) {
			j++
		}
		if j == i+1 {
			out = append(out, files[i])
		}
		i = j
	}
	return out
}

// newRefFile takes what reuse compares from the central record of a regular file. An entry
// without the extended timestamp, which backup always writes, is not reused: its time
// would be a guess.
func newRefFile(rec *centralRecord) (refFile, bool) {
	mtime := modTime(&rec.FileHeader)
	mode, _ := restoreMode(&rec.FileHeader, rec.Mode())
	return refFile{size: int64(rec.UncompressedSize64), mtimeSec: mtime.Unix(),
		local: rec.local, csize: int64(rec.CompressedSize64), crc: rec.CRC32, mode: mode,
		method: rec.Method, flags: rec.Flags}, !mtime.IsZero()
}

// readManifest reads the manifest whose central record is rec, joining each of its files
// with the records of the central directory as it is read (see join), and returns it
// without its files: a million of them parsed at once took 300 MB. A manifest that is not
// as backup writes it is parsed whole instead, and its answer taken.
func (ref *Reference) readManifest(ra io.ReaderAt, rec *centralRecord) (*format.Manifest, error) {
	if rec.UncompressedSize64 > format.MaxManifestSize {
		return nil, fmt.Errorf("manifest is %d bytes, more than the %d this reader accepts", rec.UncompressedSize64, format.MaxManifestSize)
	}
	m, err := ref.parseManifest(ra, rec, func(r io.Reader) (*format.Manifest, error) {
		return format.ScanManifest(r, format.Within{Entries: ref.entries}, ref.join)
	})
	if !errors.Is(err, format.ErrNotAsWritten) {
		return m, err
	}
	// What the scan joined is forgotten: the records ParseManifest gives are the ones
	// (where a list of files is given twice, encoding/json decodes the second over the first).
	for i := range ref.files {
		f := &ref.files[i]
		f.ctime, f.ino, f.mtimeNsec, f.sha = 0, 0, 0, format.Digest{}
	}
	m, err = ref.parseManifest(ra, rec, func(r io.Reader) (*format.Manifest, error) {
		return format.ParseManifestOf(r, format.Within{Entries: ref.entries})
	})
	if err != nil {
		return nil, err
	}
	for i := range m.Files {
		ref.join(&m.Files[i])
	}
	return m, nil
}

// parseManifest reads the manifest whose central record is rec with parse.
func (ref *Reference) parseManifest(ra io.ReaderAt, rec *centralRecord, parse func(io.Reader) (*format.Manifest, error)) (*format.Manifest, error) {
	f := &zip.File{FileHeader: rec.FileHeader}
	rc, err := openEntry(f, localRef{ra: ra, off: rec.local})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return parseEntryWith(rc, parse)
}

// join completes the record of the central directory of the file mf with the manifest's,
// when mf records what reuse compares and is not a snapshot (whose bytes are made anew each
// run); the records left without the manifest's SHA-256 are not reused.
func (ref *Reference) join(mf *format.File) {
	i, ok := ref.find(mf.Path)
	if !ok || mf.Meta == nil || mf.Meta.CtimeNsec == 0 || mf.Snapshot != nil || mf.Size != ref.files[i].size {
		return
	}
	f := &ref.files[i]
	f.ctime, f.ino, f.mtimeNsec = mf.Meta.CtimeNsec, mf.Meta.Ino, int32(mf.Meta.MtimeNsec)
	if fullSeconds(f.mtimeSec, mf.Meta.MtimeSec) {
		f.mtimeSec = mf.Meta.MtimeSec // beyond the extended timestamp's range
	}
	if ref.racy(f) {
		return
	}
	f.sha = mf.SHA256
}

// racyWindow is how long before the reference's run began a file's timestamps must be, on
// a file system whose timestamps have whole seconds, for its entry to be trusted: the
// receipt's start has whole seconds, and FAT's mtime two.
const racyWindow = 2 * time.Second

// racy reports whether f's timestamps are too close to the reference run's start to prove
// the file was not written again after that run read it (see ReuseOptions.Started). Only
// whole-second timestamps are suspect, as git judges its racily clean entries: where they
// have nanoseconds, a write after the read shows unless it falls within the kernel's clock
// tick, a risk git takes too.
func (ref *Reference) racy(f *refFile) bool {
	withCtime := !ref.opts.IgnoreCtime && !ref.opts.IgnoreInode
	if ref.opts.Started.IsZero() || f.mtimeNsec != 0 || withCtime && f.ctime%int64(time.Second) != 0 {
		return false
	}
	cut := ref.opts.Started.Truncate(time.Second).Add(-racyWindow).UnixNano()
	mtime := f.mtimeSec * int64(time.Second)
	return mtime >= cut || withCtime && f.ctime >= cut
}

// Status is the status the reference's manifest records: unlike its receipt's, the
// archive's SHA-256 vouches for it.
func (ref *Reference) Status() string { return ref.status }

// LookedForDatabases says whether the reference's run looked at every file it read for an
// SQLite database (format.DatabasesSQLite): a file unchanged since, stored without a
// snapshot, was found not to be one, and begins with the same bytes still.
// A nil Reference did not.
func (ref *Reference) LookedForDatabases() bool {
	return ref != nil && ref.databases == format.DatabasesSQLite
}

// Older says why no entry of the reference can be reused when its manifest was written by a
// version of backup from before reuse (v1, or v2 without compression, ctime_ns and ino:
// every version since writes compression); nil otherwise. Other settings than the run's
// are not said: the run chose them.
func (ref *Reference) Older() error {
	if ref == nil || ref.older == "" {
		return nil
	}
	return fmt.Errorf("its manifest (%s) records nothing that reuse compares: an older version of backup wrote it", ref.older)
}

// Size is the reference archive's size in bytes.
func (ref *Reference) Size() int64 { return ref.size }

// Reusable is how many of the reference's files could be reused.
func (ref *Reference) Reusable() int { return len(ref.files) }

// Close closes the reference's file and lets go of its records: a run closes it once every
// entry is copied, so that they do not take memory while the new archive is read back.
// Lookups after Close find nothing unchanged.
func (ref *Reference) Close() error {
	ref.files, ref.names, ref.damage = nil, "", nil
	return ref.f.Close()
}

// Unchanged reports whether the file stored as name, which lstat described as info, is
// unchanged since the reference: same size, mtime and ctime to the nanosecond, inode and
// mode, as restic and borg compare.
// A nil Reference has no unchanged file.
func (ref *Reference) Unchanged(name string, info fs.FileInfo) bool {
	_, ok := ref.lookup(name, info)
	return ok
}

func (ref *Reference) lookup(name string, info fs.FileInfo) (refEntry, bool) {
	if ref == nil {
		return refEntry{}, false
	}
	i, ok := ref.find(name)
	st, isUnix := info.Sys().(*syscall.Stat_t)
	if !ok || !isUnix || !info.Mode().IsRegular() {
		return refEntry{}, false
	}
	f := ref.files[i]
	same := f.size == info.Size() && sameTime(f.mtimeSec, f.mtimeNsec, info.ModTime()) && f.mode == info.Mode() &&
		(ref.opts.IgnoreCtime || ref.opts.IgnoreInode || f.ctime == st.Ctim.Nano()) &&
		(ref.opts.IgnoreInode || f.ino == st.Ino)
	return refEntry{refFile: f, name: ref.nameOf(&f), damage: ref.damage[int32(i)], ra: ref.zip, seed: ref.seed}, same
}

func sameTime(sec int64, nsec int32, t time.Time) bool {
	return sec == t.Unix() && int(nsec) == t.Nanosecond()
}

// header is the central record the entry was read from, as far as the checks of its local
// header need it.
func (f *refFile) header(name string) *zip.File {
	return &zip.File{FileHeader: zip.FileHeader{Name: name, Method: f.method, Flags: f.flags, CRC32: f.crc,
		CompressedSize64: uint64(f.csize), UncompressedSize64: uint64(f.size)}}
}
