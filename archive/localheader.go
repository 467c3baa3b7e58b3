package archive

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Every entry is described twice: in the central directory, which Go's reader reads, and in
// the local header before its data, which streaming readers (bsdtar, Python reading a pipe)
// and unzip -t go by. An archive whose two descriptions differ means different things to
// different tools, so an entry is read only when they agree, as unzip -t requires. The local
// header's data-descriptor flag decides, as for Info-ZIP: without it the local header holds
// the CRC-32 and sizes, which must be the central ones; with it they follow the data in a
// data descriptor, which must then be there and agree.

const (
	localSig      = 0x04034b50
	localLen      = 30
	descriptorSig = 0x08074b50
)

// flagsCompared are the flags a local header must repeat, as 7-Zip compares them (it fails
// the entry otherwise, Headers Error): all but bit 15, and for deflate its options (bits 1
// and 2), which change nothing the reader does. Bit 3 is compared on its own terms (above)
// and the UTF-8 flag (11) only for names that are not ASCII, where it changes them, as
// 7-Zip does too. Unzip and Go compare fewer: encrypted (bit 0), strong encryption (6) and
// a masked local header (13), which change what the bytes mean.
func flagsCompared(f *zip.File) uint16 {
	flags := uint16(0x7fff &^ flagDataDesc &^ flagUTF8)
	switch {
	case f.Method == zip.Deflate:
		flags &^= 0x6
	case f.Method > implode:
		flags |= 0x8000
	}
	if strings.ContainsFunc(f.Name, func(r rune) bool { return r >= 0x80 }) {
		flags |= flagUTF8
	}
	return flags
}

// implode is the last of the old methods (PKWARE's Implode, 6) for which 7-Zip leaves bit
// 15 out of the comparison.
const implode = 6

// localRef says where an entry's local header is: in ra at off; off is -1 when the central
// directory could not be walked a second time, and ra nil when nobody looked.
type localRef struct {
	ra  io.ReaderAt
	off int64
}

// localRefs locates the local header of each of files, the entries of the archive of size
// bytes in ra. When the central directory does not read the same a second time, every
// offset is -1 and every entry fails its check: an archive read two ways is not trusted.
// It also returns where the central directory starts; -1 then. A read that fails on the
// way is the error: a failed read is not damage.
func localRefs(ra io.ReaderAt, size int64, files []*zip.File) ([]localRef, int64, error) {
	refs := make([]localRef, len(files))
	offsets, dirStart, err := headerOffsetsDir(ra, size, files)
	if err := readFailed(err); err != nil {
		return nil, 0, err
	}
	for i := range refs {
		refs[i] = localRef{ra: ra, off: -1}
		if err == nil {
			refs[i].off = offsets[i]
		}
	}
	if err != nil {
		dirStart = -1
	}
	return refs, dirStart, nil
}

// localHeader is what the local header of an entry says.
type localHeader struct {
	flags, method uint16
	crc           uint32
	csize, usize  uint64
	name          string // at most as long as the central name
	nameLen       int
	dataOffset    int64
	meta          headerMeta // the owner and time it gives
	metaErr       error      // two owners or times in its extra field
	zip64         bool       // it has a zip64 field: its data descriptor has sizes of 8 bytes
	otherName     bool       // its Unicode Path field names it otherwise (otherUnicodeName)
}

// checkLocal reads the local header of f and compares it with f, the central directory's
// record; when the local header says a data descriptor follows the data, it checks that too.
// It returns where the entry's data starts, and where the entry ends.
func checkLocal(f *zip.File, loc localRef) (localSpan, error) {
	if loc.ra == nil || loc.off < 0 {
		return localSpan{}, errors.New("damaged: local header not found")
	}
	lh, err := readLocal(loc, len(f.Name), len(f.Extra))
	if err != nil {
		return localSpan{}, err
	}
	if err := lh.compare(f); err != nil {
		return localSpan{}, err
	}
	s := localSpan{data: lh.dataOffset, end: lh.dataOffset + int64(f.CompressedSize64)}
	if lh.flags&flagDataDesc != 0 {
		n, err := checkDescriptor(loc.ra, s.end, f, lh.zip64)
		if err != nil {
			return localSpan{}, err // where it ends is not known
		}
		s.end += n
	}
	return s, nil
}

// localSpan is where an entry's data starts, and where the entry ends: after its data, or
// after its data descriptor.
type localSpan struct {
	data, end int64
}

// readLocal reads the local header at loc, nameLen being the length of the central name
// and extraLen that of its extra field, which the local one most likely has too: the header
// is read with one read of the length they make.
func readLocal(loc localRef, nameLen, extraLen int) (*localHeader, error) {
	buf := make([]byte, localLen+nameLen+extraLen)
	n, err := loc.ra.ReadAt(buf, loc.off)
	if n < localLen+nameLen && err != nil && err != io.EOF {
		// Not a short file but a failed read, which the cause names: an I/O error, or an
		// encrypted archive's chunk that fails authentication (its damage).
		return nil, fmt.Errorf("local header unreadable: %w", err)
	}
	got := buf[:n]
	if n < localLen+nameLen || le32(buf) != localSig {
		return nil, errors.New("damaged: local header not found")
	}
	e := int(le16(buf[28:]))
	n = int(le16(buf[26:]))
	lh := &localHeader{flags: le16(buf[6:]), method: le16(buf[8:]), crc: le32(buf[14:]),
		csize: uint64(le32(buf[18:])), usize: uint64(le32(buf[22:])),
		name: string(buf[localLen:][:min(n, nameLen)]), nameLen: n,
		dataOffset: loc.off + localLen + int64(n) + int64(e)}
	var extra []byte
	if localLen+n+e <= len(got) {
		extra = got[localLen+n : localLen+n+e]
	} else {
		extra = make([]byte, e)
		if _, err := loc.ra.ReadAt(extra, loc.off+localLen+int64(n)); err == io.EOF {
			return nil, errors.New("damaged: local header cut short")
		} else if err != nil {
			return nil, fmt.Errorf("local header unreadable: %w", err)
		}
	}
	if need, left, bad := extraOverflow(extra); bad {
		return nil, fmt.Errorf("damaged: its local header has an extra field of %d bytes where %d remain, which unzip -t and bsdtar refuse", need, left)
	}
	lh.meta, lh.metaErr = localMeta(le16(buf[10:]), le16(buf[12:]), extra)
	_, lh.zip64 = zip64Field(extra)
	lh.otherName = otherUnicodeName(lh.name, extra)
	if lh.flags&flagDataDesc == 0 && (lh.csize == uint32max || lh.usize == uint32max) && !lh.zip64Sizes(extra) {
		return nil, errors.New("damaged: local header lacks its zip64 sizes")
	}
	return lh, nil
}

// zip64Sizes reads the sizes that the local header maxes out from its zip64 field: both are
// there, size first, as Info-ZIP reads them.
func (lh *localHeader) zip64Sizes(extra []byte) bool {
	for id, field := range extraFields(extra) {
		if id != zip64ExtraID {
			continue
		}
		for _, size := range []*uint64{&lh.usize, &lh.csize} {
			if *size != uint32max {
				continue
			}
			if len(field) < 8 {
				return false
			}
			*size, field = le64(field), field[8:]
		}
		return true
	}
	return false
}

// compare reports the first field in which the local header disagrees with f.
func (lh *localHeader) compare(f *zip.File) error {
	return lh.compareAs(f, true)
}

// compareAs is compare, of the owner and times too when meta is set; a reader that copies
// an entry's data under a local header of its own (refpass.go) need not compare them.
func (lh *localHeader) compareAs(f *zip.File, meta bool) error {
	flags := flagsCompared(f)
	var metaErr error
	if meta {
		metaErr = cmp.Or(lh.metaErr, compareMeta(lh.meta, centralMeta(&f.FileHeader)))
	}
	switch {
	case lh.nameLen != len(f.Name) || lh.name != f.Name:
		return fmt.Errorf("damaged: local header names it otherwise (%q, %d bytes)", lh.name, lh.nameLen)
	case lh.otherName:
		return errLocalUnicodePath
	case lh.method != f.Method:
		return fmt.Errorf("damaged: local header says method %d, the central directory %d", lh.method, f.Method)
	case lh.flags&flags != f.Flags&flags:
		return fmt.Errorf("damaged: local header says flags %#04x, the central directory %#04x", lh.flags, f.Flags)
	case metaErr != nil:
		return metaErr
	case lh.flags&flagDataDesc != 0:
		return lh.givenDiffers(f) // the CRC-32 and sizes are in the data descriptor
	case lh.crc != f.CRC32:
		return fmt.Errorf("damaged: local header says CRC-32 %08x, the central directory %08x", lh.crc, f.CRC32)
	case lh.csize != f.CompressedSize64:
		return fmt.Errorf("damaged: local header says %d bytes compressed, the central directory %d", lh.csize, f.CompressedSize64)
	case lh.usize != f.UncompressedSize64:
		return fmt.Errorf("damaged: local header says %d bytes, the central directory %d", lh.usize, f.UncompressedSize64)
	}
	return nil
}

// givenDiffers is compare's word on a local header followed by a data descriptor: it may
// leave the CRC-32 and sizes 0 (not known yet), or give the zip64 mark, but libarchive takes
// any other value it gives over the central directory's (bsdtar extracts that many bytes,
// with a warning), so one it gives must be the central directory's.
func (lh *localHeader) givenDiffers(f *zip.File) error {
	given := func(v uint64) bool { return v != 0 && v != uint32max }
	switch {
	case lh.crc != 0 && lh.crc != f.CRC32:
		return fmt.Errorf("damaged: local header says CRC-32 %08x, the central directory %08x", lh.crc, f.CRC32)
	case given(lh.csize) && lh.csize != f.CompressedSize64:
		return fmt.Errorf("damaged: local header says %d bytes compressed, the central directory %d", lh.csize, f.CompressedSize64)
	case given(lh.usize) && lh.usize != f.UncompressedSize64:
		return fmt.Errorf("damaged: local header says %d bytes, the central directory %d", lh.usize, f.UncompressedSize64)
	}
	return nil
}

// bsdtar names an entry by its local header's Unicode Path field, unzip and 7-Zip by the
// central record's: see errUnicodePath.
var errLocalUnicodePath = errors.New("damaged: its local header's Unicode Path field names it otherwise (the name bsdtar gives it)")

var errDescriptor = errors.New("damaged: data descriptor missing or different from the central directory")

// checkDescriptor checks the data descriptor at off against f: its CRC-32 and its sizes, in
// any of the forms writers use (with or without its signature, sizes of 4 or 8 bytes). It
// returns the descriptor's length, in the first form that matches, sizes of 8 bytes first
// when wide (the local header has a zip64 field, which says so for Info-ZIP): the first 16
// bytes of a wide descriptor of small sizes read as a narrow one too.
func checkDescriptor(ra io.ReaderAt, off int64, f *zip.File, wide bool) (int64, error) {
	var buf [24]byte
	n, err := ra.ReadAt(buf[:], off)
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("data descriptor unreadable: %w", err)
	}
	b := buf[:n]
	if len(b) >= 4 && le32(b) == descriptorSig {
		if m := descriptorMatches(b[4:], f, wide); m > 0 {
			return 4 + m, nil
		}
		// Go's reader takes these 4 bytes for the signature whatever follows: a descriptor
		// without one, whose CRC-32 is the signature's value, gives it another CRC-32.
		return 0, errDescriptor
	}
	if m := descriptorMatches(b, f, wide); m > 0 {
		return m, nil
	}
	return 0, errDescriptor
}

// descriptorMatches is the length of the data descriptor without its signature that b
// starts with, when it agrees with f: 12 with sizes of 4 bytes, 20 with sizes of 8, tried
// first when wide; 0 when it does not agree.
func descriptorMatches(b []byte, f *zip.File, wide bool) int64 {
	if len(b) < 12 || le32(b) != f.CRC32 {
		return 0
	}
	b = b[4:]
	narrow := uint64(le32(b)) == f.CompressedSize64 && uint64(le32(b[4:])) == f.UncompressedSize64
	wideOK := len(b) >= 16 && le64(b) == f.CompressedSize64 && le64(b[8:]) == f.UncompressedSize64
	switch {
	case wideOK && (wide || !narrow):
		return 20
	case narrow:
		return 12
	}
	return 0
}
