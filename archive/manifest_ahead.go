package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"io"
	"os"
	"slices"

	"backup/format"
)

// The manifest of an archive file is parsed while Go's reader reads the central directory:
// each takes about as long (40 and 20 to 50 ms for the bench corpus's 31,484 entries), and
// nothing else can start before both are done: restore's plan, verify's checks, list's
// lines. A walk of the directory of its own finds the manifest's record first (a few ms).
// (A set run's reference is read by a reader of its own, OpenReference.)
//
// What the parse read ahead gives is taken only when the record Go's reader gives is the
// same in all that decides what the parse read and how it checked it: the local header's
// offset, where the data start (found by dataAt, the full check of the headers), the name,
// method, sizes and CRC-32, and the count of entries that bounds the manifest's records.
// The same bytes checked the same way give the same manifest, or the same error. Otherwise
// the manifest is read again, as it was before.

// aheadMax bounds the entries of an archive whose manifest is read ahead: with more, Go's
// list of entries and the manifest would be in memory at once (266 and 190 MB at a million
// entries), which NewReader otherwise avoids.
const aheadMax = 1 << 17

// manifestAhead is a parse of the manifest begun before Go's reader read the directory.
type manifestAhead struct {
	reads *failedRead // what it read of the archive
	f     *zip.File   // the manifest's record, as far as the parse used it; nil if not found
	off   int64       // where its local header starts
	data  int64       // where its data start
	in    format.Within
	done  chan struct{}
	m     *format.Manifest
	err   error
	taken bool // its answer is the reader's
}

// readManifestAhead starts parsing the manifest of the archive in ra (size bytes), found by
// its central record; nil when ra is neither a file nor in memory. A bucket's object is not
// read ahead: each read is a request, and the directory is read twice already. Nothing is
// parsed when the archive has more than aheadMax entries or the record is not found as
// backup writes it (one record of that name, sizes of 4 bytes).
func readManifestAhead(ra io.ReaderAt, size int64, notes bool) *manifestAhead {
	switch ra.(type) {
	case *os.File, *lockedRecorder, *bytes.Reader: // OpenFile's file is a lockedRecorder
	default:
		return nil
	}
	a := &manifestAhead{reads: &failedRead{ra: ra}, done: make(chan struct{})}
	f, loc, extraLen, records := manifestRecord(a.reads, size)
	if f == nil || f.UncompressedSize64 > format.MaxManifestSize {
		close(a.done)
		return a
	}
	lh, err := readLocal(loc, len(f.Name), extraLen)
	if err != nil || lh.compareAs(f, false) != nil {
		close(a.done)
		return a
	}
	a.f, a.off, a.data = f, loc.off, lh.dataOffset
	a.in = format.Within{Entries: records - 1, Notes: notes}
	go func() {
		defer close(a.done)
		span := localSpan{data: a.data, end: a.data + int64(f.CompressedSize64)}
		a.m, a.err = readManifestFrom(f, func() (io.ReadCloser, error) { return openData(f, loc, span) }, a.in)
	}()
	return a
}

// wait returns once the parse is done: nothing reads the archive after NewReader returns.
func (a *manifestAhead) wait() {
	if a != nil {
		<-a.done
	}
}

// take returns the manifest f, whose local header is at loc, as readManifest does: the one
// read ahead when it was read from the same record.
func (a *manifestAhead) take(f *zip.File, loc localRef, in format.Within) (*format.Manifest, error) {
	if a != nil && a.f != nil {
		<-a.done
		span, err := dataAt(f, loc)
		if err != nil { // what reading it again would meet first, and report
			return readManifestFrom(f, func() (io.ReadCloser, error) { return nil, err }, in)
		}
		// The walk's count of records bounds the parse; Go's reader can end the directory
		// before the walk does (at a record it cannot read, where a lying count agrees).
		if a.same(f, loc, span) && a.in == in {
			a.taken = true
			return a.m, a.err
		}
	}
	return readManifest(f, loc, in)
}

func (a *manifestAhead) same(f *zip.File, loc localRef, span localSpan) bool {
	return loc.off == a.off && span.data == a.data && f.Name == a.f.Name && f.Method == a.f.Method &&
		f.CRC32 == a.f.CRC32 && f.CompressedSize64 == a.f.CompressedSize64 && f.UncompressedSize64 == a.f.UncompressedSize64
}

// unreported is the read of the archive that failed reading ahead, unless the answer taken
// is an error (a read of the parse that failed is one): a command that met an I/O error
// says so, even when reading again succeeded, or when the failed read came after the
// manifest's record (the walk ends at its first failed read).
func (a *manifestAhead) unreported() error {
	if a == nil {
		return nil
	}
	<-a.done
	if a.taken && a.err != nil {
		return nil
	}
	return a.reads.err
}

// failedRead passes reads on to ra, and remembers the first that failed (io.EOF, at the
// end of the file, is no failure). One goroutine at a time reads through it.
type failedRead struct {
	ra  io.ReaderAt
	err error
}

func (r *failedRead) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ra.ReadAt(p, off)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// manifestRecord walks the central directory of the archive in ra (size bytes) for the
// manifest's record, as headerOffsetsDir walks it, and returns what of it the parse needs,
// the length of its extra field, and how many records the directory has; f is nil when it
// is not found as backup writes it. Like Go's reader, the walk reads records for as long as
// there are, whatever the end record counts (Go compares 16 bits of the count only), and
// gives up past aheadMax of them.
func manifestRecord(ra io.ReaderAt, size int64) (f *zip.File, loc localRef, extraLen int, records int) {
	end, dirSize, dirOff, n, err := directoryEnd(ra, size)
	if err != nil || n > aheadMax || end-dirSize-dirOff != 0 || dirOff >= size {
		return nil, localRef{}, 0, 0 // also an archive with bytes before it: Go's reader says where it starts
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, dirOff, size-dirOff), 64<<10)
	name := []byte(format.ManifestName)
	var rec [centralLen]byte
	var vari []byte
	found := 0
	for ; records <= aheadMax; records++ {
		if _, err := io.ReadFull(br, rec[:]); err != nil || le32(rec[:]) != centralSig {
			if found != 1 {
				return nil, localRef{}, 0, 0
			}
			return f, loc, extraLen, records
		}
		nl, el, cl := int(le16(rec[28:])), int(le16(rec[30:])), int(le16(rec[32:]))
		vari = slices.Grow(vari[:0], nl+el+cl)[:nl+el+cl]
		if _, err := io.ReadFull(br, vari); err != nil {
			return nil, localRef{}, 0, 0
		}
		if !bytes.Equal(bytes.TrimSuffix(vari[:nl], []byte("/")), name) {
			continue
		}
		if found++; found > 1 || nl != len(name) {
			return nil, localRef{}, 0, 0 // a duplicate, or a folder: Go's reader says which
		}
		csize, usize, off := le32(rec[20:]), le32(rec[24:]), int64(le32(rec[42:]))
		if csize == uint32max || usize == uint32max {
			return nil, localRef{}, 0, 0
		}
		if off == uint32max {
			var ok bool
			if off, ok = zip64Offset(vari[nl:nl+el], false, false); !ok {
				return nil, localRef{}, 0, 0
			}
		}
		f = &zip.File{FileHeader: zip.FileHeader{Name: format.ManifestName, Flags: le16(rec[8:]), Method: le16(rec[10:]),
			CRC32: le32(rec[16:]), CompressedSize64: uint64(csize), UncompressedSize64: uint64(usize)}}
		loc, extraLen = localRef{ra: ra, off: off}, el
	}
	return nil, localRef{}, 0, 0 // more than aheadMax
}
