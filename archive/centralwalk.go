package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"io"
	"math"
	"slices"
)

// Go's zip reader holds every entry of an archive at once, about 300 bytes each with its name
// and extra field: 300 MB for a million entries. A reference is read for a few fields of each
// of its files, so its central directory is streamed here instead, one record at a time.

// centralRecord is one record of the central directory: the header as Go's reader would
// fill it in, except Modified (see modTime), and where the entry's local header is. Its
// Extra is only valid until the next record is read.
type centralRecord struct {
	zip.FileHeader
	local int64
}

// walkCentral calls fn with each record of the central directory of the archive of size
// bytes in ra, in order. It fails when the directory cannot be found or a record is cut
// short or malformed, or with fn's error.
func walkCentral(ra io.ReaderAt, size int64, fn func(*centralRecord) error) error {
	end, dirSize, dirOff, count, err := directoryEnd(ra, size)
	if err != nil {
		return err
	}
	base := end - dirSize - dirOff // bytes before the archive, as in a self-extractor
	if base > 0 {
		name, err := centralNameAt(ra, dirOff)
		if err != nil {
			return err
		}
		if name != "" {
			return directoryShort(ra, base, dirOff) // where Go's reader finds it, not others
		}
	}
	if base < 0 || base+dirOff+dirSize > size {
		return errCentral
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, base+dirOff, dirSize), 64<<10)
	var rec centralRecord
	var fixed [centralLen]byte
	var vari []byte
	records := 0
	for read := int64(0); read < dirSize; records++ {
		if _, err := io.ReadFull(br, fixed[:]); err != nil || le32(fixed[:]) != centralSig {
			return cmp.Or(readFailed(err), errCentral)
		}
		n, e, c := int(le16(fixed[28:])), int(le16(fixed[30:])), int(le16(fixed[32:]))
		vari = slices.Grow(vari[:0], n+e+c)[:n+e+c]
		if _, err := io.ReadFull(br, vari); err != nil {
			return cmp.Or(readFailed(err), errCentral)
		}
		read += int64(centralLen + n + e + c)
		if disk := le16(fixed[34:]); disk != 0 {
			return onOtherDisk(string(vari[:n]), disk)
		}
		if err := checkCentralExtra(string(vari[:n]), vari[n:n+e]); err != nil {
			return err
		}
		if !rec.parse(fixed[:], vari[:n], vari[n:n+e]) {
			return errCentral
		}
		rec.local += base
		if err := fn(&rec); err != nil {
			return err
		}
	}
	// Go's reader (verify's, restore's) reads as many records as the end record counts,
	// and refuses a directory of another number (compared in 16 bits, as tools that
	// count past 65,535 without zip64 wrap it): a reference must be read as they read it.
	if uint16(records) != uint16(count) {
		return errCentral
	}
	return nil
}

// centralCount is how many records the central directory of the archive of size bytes in
// ra holds, as its end record says, but no more than its size has room for: a list of them
// is made that long at once, rather than grown (a quarter more held at a million files).
// room is how many bytes the records' names, extra fields and comments take together,
// which bounds their names. Both are 0 when the end record cannot be read.
func centralCount(ra io.ReaderAt, size int64) (n, room int) {
	_, dirSize, _, count, err := directoryEnd(ra, size)
	if err != nil {
		return 0, 0
	}
	n = int(min(count, uint64(dirSize/centralLen)))
	return n, int(min(dirSize-int64(n)*centralLen, math.MaxUint32))
}

// parse fills rec from a record's fixed part, name and extra field, the sizes and offset
// that are maxed out read from the zip64 field as Go's reader reads them.
func (rec *centralRecord) parse(fixed, name, extra []byte) bool {
	rec.FileHeader = zip.FileHeader{
		Name:           string(name),
		CreatorVersion: le16(fixed[4:]),
		ReaderVersion:  le16(fixed[6:]),
		Flags:          le16(fixed[8:]),
		Method:         le16(fixed[10:]),
		ModifiedTime:   le16(fixed[12:]),
		ModifiedDate:   le16(fixed[14:]),
		CRC32:          le32(fixed[16:]),
		Extra:          extra,
		ExternalAttrs:  le32(fixed[38:]),
	}
	csize, usize, off := uint64(le32(fixed[20:])), uint64(le32(fixed[24:])), uint64(le32(fixed[42:]))
	if csize == uint32max || usize == uint32max || off == uint32max {
		z, ok := zip64Field(extra)
		for _, v := range []*uint64{&usize, &csize, &off} {
			if *v != uint32max {
				continue
			}
			if !ok || len(z) < 8 {
				return false
			}
			*v, z = le64(z), z[8:]
		}
	}
	if off >= 1<<63 || csize >= 1<<63 {
		return false
	}
	rec.CompressedSize64, rec.UncompressedSize64, rec.local = csize, usize, int64(off)
	return true
}

// zip64Field returns the data of the zip64 field in extra.
func zip64Field(extra []byte) ([]byte, bool) {
	for id, field := range extraFields(extra) {
		if id == zip64ExtraID {
			return field, true
		}
	}
	return nil, false
}

// manifestAt is where the manifest's record of a central directory is: its offset in the
// file, and its index among the directory's records.
type manifestAt struct {
	off   int64
	index int
	ok    bool
}

// readCentralAt reads and parses the central directory record at off.
func readCentralAt(ra io.ReaderAt, off int64) (*centralRecord, error) {
	var fixed [centralLen]byte
	if _, err := ra.ReadAt(fixed[:], off); err != nil || le32(fixed[:]) != centralSig {
		return nil, cmp.Or(readFailed(err), errCentral)
	}
	n, e, c := int(le16(fixed[28:])), int(le16(fixed[30:])), int(le16(fixed[32:]))
	vari := make([]byte, n+e+c)
	if _, err := ra.ReadAt(vari, off+centralLen); err != nil {
		return nil, cmp.Or(readFailed(err), errCentral)
	}
	rec := new(centralRecord)
	if !rec.parse(fixed[:], vari[:n], vari[n:n+e]) {
		return nil, errCentral
	}
	return rec, nil
}

// sameRecord reports whether a and b record the same entry: the same local header, name,
// method, flags, digest, sizes and extra field.
func sameRecord(a, b *centralRecord) bool {
	return a.local == b.local && a.Name == b.Name && a.Method == b.Method && a.Flags == b.Flags &&
		a.CRC32 == b.CRC32 && a.CompressedSize64 == b.CompressedSize64 &&
		a.UncompressedSize64 == b.UncompressedSize64 && bytes.Equal(a.Extra, b.Extra)
}
