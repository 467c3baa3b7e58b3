package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/flate"

	"backup/atomicfile"
	"backup/format"
	"backup/skiprules"
)

// Reader reads an archive: its entries and, when another tool did not make it, its manifest.
// Every name in it may be hostile; nothing here trusts one.
type Reader struct {
	// Entries are the archive's entries in archive order, every entry named ManifestName
	// left out wherever it stands: the manifest is never restored as a file.
	Entries []*Entry
	// Manifest is the parsed manifest; nil when the archive has none or it is unreadable.
	Manifest *format.Manifest
	// HasManifest says an entry is named ManifestName: a backup archive, not a foreign one,
	// whether or not the manifest could be read. Backup writes it last; an entry appended
	// after it does not hide it.
	HasManifest bool
	// ManifestErr says why a manifest that is there could not be read or parsed, or why it
	// cannot be trusted (stored twice, or as a directory).
	ManifestErr error

	index  *format.Index // Manifest's; nil without one
	ra     io.ReaderAt
	closer io.Closer
	size   int64
	// file and fileSize are the archive file as stored, which its receipt's size and
	// SHA-256 describe: ra and size, unless Unseal gave ra (an encrypted archive).
	file     io.ReaderAt
	fileSize int64
	// dirStart is where the central directory starts in ra, -1 when it could not be
	// walked a second time; manifests are the entries of the manifest's name, which are
	// not in Entries. Verify's coverage check (coverage.go) needs both.
	dirStart  int64
	manifests []manifestRef
	// parsed are the ranges of the archive file the reading of its directory and manifest
	// read, with the SHA-256 of what it got, when OpenWith opened it: Sum checks them.
	parsed []readRecord
	// aheadTaken says the manifest is the one parsed beside Go's reader (see
	// manifest_ahead.go), which nothing but its speed tells apart: a test asks.
	aheadTaken bool
}

// manifestRef is an entry of the manifest's name: its central record and local header.
type manifestRef struct {
	f   *zip.File
	loc localRef
}

// Unseal gives the zip held by an archive file that is not a zip itself (an encrypted
// archive: seal's Identities.Unseal): random access to its size bytes, for reading entries,
// while the file's own bytes are what a receipt's size and SHA-256 describe. It returns
// file itself for a file that is a zip, and an error for one it cannot open (no key).
type Unseal func(file io.ReaderAt, size int64) (zip io.ReaderAt, zipSize int64, err error)

// ReadOptions says how an archive is read.
type ReadOptions struct {
	// Unseal decrypts an archive file that is not a zip itself; nil for none.
	Unseal Unseal
	// Notes holds the manifest's records of what was skipped, excluded and warned about,
	// which only a listing shows: without, the Manifest has none (see format.Within).
	Notes bool
}

// Open opens the archive at path and reads its directory and manifest. It fails only when
// the file is not a readable zip archive; a damaged manifest is reported in ManifestErr.
func Open(path string) (*Reader, error) {
	return OpenWith(path, ReadOptions{})
}

// OpenWith is Open, as opts says.
func OpenWith(path string, opts ReadOptions) (*Reader, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return OpenFile(f, size, opts)
}

// OpenFile is OpenWith for the regular file f (size bytes), already open: a caller that
// checked a file first reads that file, whatever its name names since. The Reader closes
// f; so does OpenFile when it fails.
func OpenFile(f *os.File, size int64, opts ReadOptions) (*Reader, error) {
	r, err := NewCheckedReader(f, size, opts)
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	r.closer = f
	return r, nil
}

// NewCheckedReader is NewReaderWith, recording the ranges of file that the reading of its
// directory and manifest read, so that Sum, and Verify's hash for its receipt, check on
// their way that the file still holds them: a hash of the file as it was later vouches for
// nothing read before it (see Sum).
func NewCheckedReader(file io.ReaderAt, size int64, opts ReadOptions) (*Reader, error) {
	// The manifest is read ahead beside Go's reader, so the recording takes a lock.
	rec := &lockedRecorder{rec: recordingReader{ra: file}}
	r, err := NewReaderWith(rec, size, opts)
	if err != nil {
		return nil, err
	}
	rec.mu.Lock()
	rec.rec.stopped.Store(true)
	r.parsed = rec.rec.reads
	rec.mu.Unlock()
	r.file = file
	return r, nil
}

// lockedRecorder is a recordingReader that goroutines may read through at once.
type lockedRecorder struct {
	mu  sync.Mutex
	rec recordingReader
}

// ReadAt reads and hashes outside the lock, which the record's append alone takes: held
// over the read and the hash, it kept Go's reader and the parse beside it waiting on each
// other for most of their reads.
func (l *lockedRecorder) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.rec.ra.ReadAt(p, off)
	if n > 0 && !l.rec.stopped.Load() {
		r := recordOf(p[:n], off)
		l.mu.Lock()
		l.rec.reads = append(l.rec.reads, r)
		l.mu.Unlock()
	}
	return n, err
}

// openFile opens the archive file at path and returns its size. It follows a symlink (the
// user named the path) but opens without blocking and refuses anything but a regular file: a
// zip is read at random, and a FIFO or device put at the path must not hang the command.
func openFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, &os.PathError{Op: "open", Path: path, Err: errors.New("is " + atomicfile.DescribeType(info.Mode()))}
	}
	return f, info.Size(), nil
}

// NewReaderWith is NewReader for an archive file (size bytes), as opts says: when it is
// sealed, entries are read from the zip opts.Unseal gives, and Verify hashes file.
func NewReaderWith(file io.ReaderAt, size int64, opts ReadOptions) (*Reader, error) {
	ra, n := file, size
	if opts.Unseal != nil {
		var err error
		if ra, n, err = opts.Unseal(file, size); err != nil {
			return nil, err
		}
	}
	r, err := newReader(ra, n, opts.Notes)
	if err != nil {
		return nil, err
	}
	r.file, r.fileSize = file, size
	return r, nil
}

// NewReader reads the archive of size bytes in ra, as Open does. Verify reads ra from
// several goroutines at once, as the io.ReaderAt contract allows.
func NewReader(ra io.ReaderAt, size int64) (*Reader, error) {
	return newReader(ra, size, false)
}

// newReader is NewReader, holding the manifest's notes when notes.
func newReader(ra io.ReaderAt, size int64, notes bool) (*Reader, error) {
	ahead := readManifestAhead(ra, size, notes)
	defer ahead.wait()
	zr, err := zip.NewReader(ra, size)
	// Insecure names are reported only under GODEBUG=zipinsecurepath=0, with a usable
	// reader; restore makes its own, stricter checks.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, zipError(err)
	}
	RegisterDecompressors(zr)
	// Go's reader is let go of once the entries are made: each Entry keeps what it needs of
	// its record, so that its list (hundreds of MB at a million entries) is not held while
	// the manifest is parsed and the entries are checked.
	r := &Reader{ra: ra, size: size, file: ra, fileSize: size}
	locals, dirStart, err := localRefs(ra, size, zr.File)
	if err != nil {
		return nil, err
	}
	r.dirStart = dirStart
	var manifests int
	var manifest *zip.File
	var manifestAt localRef
	r.Entries = make([]*Entry, 0, len(zr.File))
	for i, f := range zr.File {
		// Each zip.File is let go of as soon as it is read: Go's list and the Entries are
		// never whole in memory together (266 and 190 MB at a million entries).
		zr.File[i] = nil
		if strings.TrimSuffix(f.Name, "/") == format.ManifestName {
			// A copy of its header: a zip.File holds on to the Reader, and the Reader to all.
			manifest, manifestAt = &zip.File{FileHeader: f.FileHeader}, locals[i]
			manifests++
			r.manifests = append(r.manifests, manifestRef{manifest, manifestAt})
			continue
		}
		e := newEntry(f)
		e.local = locals[i]
		if manifests > 0 {
			e.hdr.bits |= hdrAfterManifest
		}
		r.Entries = append(r.Entries, e)
	}
	r.HasManifest = manifests > 0
	var notManifest error
	if manifest != nil {
		notManifest = notAManifest(&manifest.FileHeader)
	}
	switch {
	case manifests == 0:
	case manifests > 1:
		// Which one would a tool restore? unzip keeps the last, Go's fs.FS the first.
		r.ManifestErr = errDuplicateName
	case notManifest != nil:
		r.ManifestErr = notManifest
	case otherUnicodeName(manifest.Name, manifest.Extra):
		// unzip and 7-Zip would write the manifest's JSON at that name.
		r.ManifestErr = errUnicodePath
	default:
		r.Manifest, r.ManifestErr = ahead.take(manifest, manifestAt, format.Within{Entries: len(r.Entries), Notes: notes})
		r.aheadTaken = ahead != nil && ahead.taken
	}
	if r.Manifest != nil {
		r.joinManifest()
	}
	if err := ahead.unreported(); err != nil {
		return nil, err
	}
	return r, nil
}

// notAManifest says why f, an entry of the manifest's name, is not the regular file backup
// writes: a directory, or a symlink, FIFO or device by its Unix mode, which unzip and
// bsdtar extract as such (a symlink whose target is the JSON text), so that a reader of
// the zip alone finds no manifest in it. nil for a file.
func notAManifest(f *zip.FileHeader) error {
	if f.Name != format.ManifestName {
		return errors.New("a directory, not a manifest")
	}
	if kind := skiprules.KindOf(f.Mode()); kind != "" {
		return fmt.Errorf("a %s entry, not a manifest", kind)
	}
	return nil
}

// errAfterManifest is the damage of a directory entry stored after the manifest. The
// manifest lists files only, and backup writes it last: such an entry was added later.
var errAfterManifest = errors.New("directory entry after the manifest, which backup writes last")

// zipError words the errors of Go's zip reader for someone who has never read its source.
func zipError(err error) error {
	switch {
	case errors.Is(err, zip.ErrFormat):
		return errors.New("not a zip archive, or its central directory is damaged")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("archive is cut short (central directory incomplete)")
	}
	return err
}

// joinManifest indexes the manifest (a sorted index: a map of a million names took 100 MB
// more), gives each symlink entry the target it records, and has each entry it lists share
// the manifest's copy of its name: a million-file archive held each name twice.
func (r *Reader) joinManifest() {
	r.index = format.NewIndex(r.Manifest)
	for _, e := range r.Entries {
		switch {
		case e.IsDir:
		case e.Kind == "":
			if f, ok := r.index.File(e.Name); ok {
				e.Name = f.Path
			}
		case e.Kind == skiprules.KindSymlink:
			if l, ok := r.index.Symlink(e.Name); ok {
				e.Name, e.Target = l.Path, l.Target
			}
		}
	}
}

// RecordedSHA256 is the SHA-256 the manifest records for e, a regular file entry of r; false
// when there is none to tell (no manifest, or e is not in it).
func (r *Reader) RecordedSHA256(e *Entry) (format.Digest, bool) {
	if r.Manifest == nil || e.IsDir || e.Kind != "" {
		return format.Digest{}, false
	}
	f, ok := r.index.File(e.Name)
	return f.SHA256, ok
}

// RecordedMtime is e's mtime as restore gives it (see Entry.Mtime), to the whole second.
func (r *Reader) RecordedMtime(e *Entry) time.Time {
	if r.Manifest == nil {
		return e.Modified
	}
	return e.Mtime(e.RecordedMeta(r.index)).Truncate(time.Second)
}

// Size is the size of the zip in bytes (of the archive file, unless it is encrypted).
func (r *Reader) Size() int64 { return r.size }

// Sum is the size and SHA-256 of the archive file as stored (the ciphertext of an encrypted
// one), which its receipt records: of the very file r reads, so that a file swapped in at
// the archive's name after r opened it cannot pass the check for it. It reads the whole
// file; ctx stops it. The hash vouches for the directory and manifest r read before it only
// if the file still held those bytes: whoever owns the file (one put at the archive's name)
// can write it in place, forged while r reads its directory and its original bytes back for
// the hash. So, for an archive OpenWith opened, the hash checks on its way each range that
// reading read, as a reference's does (see refsum.go), and Sum fails when one changed.
func (r *Reader) Sum(ctx context.Context) (format.Summary, error) {
	if r.parsed == nil {
		s := <-startSum(ctx, r.file, r.fileSize)
		return s.Summary, s.err
	}
	s := newSeqReader(ctx, r.file, r.fileSize, slices.SortedFunc(slices.Values(r.parsed), byOffset), true)
	defer s.stop()
	err := s.skipTo(r.fileSize)
	switch {
	case errors.Is(err, ErrNotAsRecorded) || err == nil && !s.rc.done():
		return format.Summary{}, ErrChangedWhileRead
	case err != nil:
		return format.Summary{}, err
	}
	return format.Summary{Size: r.fileSize, SHA256: hex.EncodeToString(s.sum.sum())}, nil
}

// ErrChangedWhileRead is Sum's verdict on an archive file whose bytes changed between the
// reading of its directory and manifest and the hash for its receipt (or that was cut short
// meanwhile): unlike a read that failed, it says the file is not what was read.
var ErrChangedWhileRead = errors.New("the archive file changed while it was read (its directory or manifest no longer holds what was read)")

// Close closes the archive file.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// readManifest reads and parses the manifest f, at loc, of an archive as in says.
func readManifest(f *zip.File, loc localRef, in format.Within) (*format.Manifest, error) {
	return readManifestFrom(f, func() (io.ReadCloser, error) { return openEntry(f, loc) }, in)
}

// readManifestFrom is readManifest, the data of f being read from what open opens.
func readManifestFrom(f *zip.File, open func() (io.ReadCloser, error), in format.Within) (*format.Manifest, error) {
	if f.UncompressedSize64 > format.MaxManifestSize {
		return nil, fmt.Errorf("manifest is %d bytes, more than the %d this reader accepts", f.UncompressedSize64, format.MaxManifestSize)
	}
	// A manifest as backup writes it is read into a list made for the files the archive
	// holds (format.ReadManifest); any other is parsed whole, and its answer taken.
	m, err := parseManifestEntry(open, func(r io.Reader) (*format.Manifest, error) { return format.ReadManifest(r, in) })
	if errors.Is(err, format.ErrNotAsWritten) {
		m, err = parseManifestEntry(open, func(r io.Reader) (*format.Manifest, error) { return format.ParseManifestOf(r, in) })
	}
	return m, err
}

// parseManifestEntry parses the manifest that open opens with parse.
func parseManifestEntry(open func() (io.ReadCloser, error), parse func(io.Reader) (*format.Manifest, error)) (*format.Manifest, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return parseEntryWith(rc, parse)
}

// parseEntryWith parses the manifest with parse as it is read from its entry rc, never
// whole in memory (it is hundreds of MB at a million files). When the parse fails, the rest
// of the entry is read: damage that the CRC-32 or the decompressor finds is reported as
// such, not as the bad JSON it makes.
func parseEntryWith(rc io.Reader, parse func(io.Reader) (*format.Manifest, error)) (*format.Manifest, error) {
	ahead := newAheadReader(rc)
	defer ahead.stop()
	er := &errReader{r: ahead}
	m, err := parse(er)
	if err != nil && er.err == nil {
		io.Copy(io.Discard, er)
	}
	if er.err != nil {
		return nil, er.err
	}
	return m, err
}

// errReader remembers the first error of r other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// flateReaders keeps deflate readers (*flateState) for reuse: each holds a 32 KiB window
// and more, and a read buffer. A state belongs to the one pooledFlate that took it, which
// one goroutine reads (the one checking or restoring its entry), until that pooledFlate's
// Close puts it back; so Verify's workers can share the pool.
var flateReaders sync.Pool

// flateReadSize is the read buffer under each deflate reader. The decompressor would
// otherwise wrap each entry in a new 4 KiB bufio.Reader: that allocation, and a system call
// per 4 KiB of compressed data, made verifying the benchmark corpus's archive about 10%
// slower (BenchmarkVerify: 0.82 s against 0.73 s).
const flateReadSize = 64 << 10

type flateState struct {
	fr     io.ReadCloser
	src    *bufio.Reader
	primer bytes.Reader
}

type pooledFlate struct {
	*flateState
}

func (p *pooledFlate) Read(b []byte) (int, error) {
	if p.flateState == nil {
		return 0, errors.New("read after close")
	}
	n, err := p.fr.Read(b)
	if err == io.EOF {
		err = p.trailing()
	}
	return n, err
}

// errTrailer is the damage of an entry whose compressed size runs on past the end of its
// deflate stream: a reader of the central directory stops at the stream's end, a streaming
// reader (bsdtar reading a pipe) goes on from there, and takes what follows for a data
// descriptor and the next local entry, which may be one the central directory never lists.
var errTrailer = errors.New("damaged: its compressed data go on after the end of its deflate stream, where a streaming reader (bsdtar reading a pipe) looks for the next entry")

// trailing is io.EOF when the deflate stream ended with the entry's compressed data, else
// errTrailer. The decompressor reads its source byte by byte (an io.ByteReader), never past
// the stream's end.
func (p *pooledFlate) trailing() error {
	switch _, err := p.src.ReadByte(); {
	case err == nil:
		return errTrailer
	case err != io.EOF:
		return err
	}
	return io.EOF
}

func (p *pooledFlate) Close() error {
	st := p.flateState
	if st == nil {
		return nil
	}
	p.flateState = nil
	err := st.fr.Close()
	st.src.Reset(nil) // let go of the entry's reader while pooled
	flateReaders.Put(st)
	return err
}

func newFlateReader(r io.Reader) io.ReadCloser {
	st, ok := flateReaders.Get().(*flateState)
	if !ok {
		st = newFlateState()
	}
	return st.open(r)
}

func newFlateState() *flateState {
	src := bufio.NewReaderSize(nil, flateReadSize)
	return &flateState{fr: flate.NewReader(src), src: src}
}

// open starts reading the deflate stream r with st, which first forgets the streams it read.
func (st *flateState) open(r io.Reader) *pooledFlate {
	st.forget()
	st.src.Reset(r)
	st.fr.(flate.Resetter).Reset(st.src, nil)
	return &pooledFlate{st}
}

// forget leaves st's decoder as every state's is after decoding primer. Its Reset keeps the
// Huffman tables of the last block decoded, and a block with an empty tree (legal for the
// distances when no match follows) leaves that table as it was: a damaged stream that then
// uses the tree decodes through another entry's code instead of failing at once. What a
// damaged entry's problem says would depend on which entry the worker read before
// (FuzzFlateReaderForgets). Decoding primer, whose two trees are not empty, sets both.
func (st *flateState) forget() {
	st.primer.Reset(primer)
	st.fr.(flate.Resetter).Reset(&st.primer, nil)
	if n, err := io.Copy(io.Discard, st.fr); n != 4 || err != nil {
		panic(fmt.Sprintf("archive: the deflate primer decodes to %d bytes, %v", n, err))
	}
}

// primer is a dynamic block with a literal, a match and the end of the block: "aaaa".
var primer = []byte{0x0d, 0xc0, 0x01, 0x09, 0x00, 0x00, 0x00, 0x80, 0xa0, 0xad, 0xfe, 0x3f, 0x51, 0x5a}
