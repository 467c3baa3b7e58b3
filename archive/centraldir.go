package archive

import (
	"archive/zip"
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"backup/format"
)

// Go's zip reader keeps where each entry's local header starts to itself, and the local
// headers must be checked against the central directory (see localheader.go). So the central
// directory is walked a second time here, as far as each header's offset and no further: the
// same records Go's reader read, found the same way, in the same order.

// Signatures and fixed lengths of the records read here (APPNOTE 4.3.12 to 4.3.16).
const (
	centralSig   = 0x02014b50
	centralLen   = 46
	eocdSig      = 0x06054b50
	eocdLen      = 22
	eocd64LocSig = 0x07064b50
	eocd64LocLen = 20
	eocd64Sig    = 0x06064b50
	eocd64Len    = 56
	zip64ExtraID = 0x0001
)

// errCentral is the cause when the central directory does not read the same a second time.
var errCentral = errors.New("central directory does not read back the same")

// headerOffsets returns where the local header of each of files starts, files being the
// entries Go's reader read from the archive of size bytes in ra, in their order.
func headerOffsets(ra io.ReaderAt, size int64, files []*zip.File) ([]int64, error) {
	offsets, _, err := headerOffsetsDir(ra, size, files)
	return offsets, err
}

// headerOffsetsDir is headerOffsets, and says where the central directory starts.
func headerOffsetsDir(ra io.ReaderAt, size int64, files []*zip.File) (offsets []int64, dirStart int64, err error) {
	end, dirSize, dirOff, _, err := directoryEnd(ra, size)
	if err != nil {
		return nil, 0, err
	}
	base := end - dirSize - dirOff // bytes before the archive, as in a self-extractor
	if base < 0 || base+dirOff >= size {
		return nil, 0, errCentral
	}
	// Go's reader trusts a directory found where the end record says it is over the offset
	// the end record implies; other tools do not.
	if base > 0 && len(files) > 0 {
		name, err := centralNameAt(ra, dirOff)
		if err != nil {
			return nil, 0, err
		}
		if name == files[0].Name {
			return nil, 0, directoryShort(ra, base, dirOff)
		}
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, base+dirOff, size-base-dirOff), 64<<10)
	offsets = make([]int64, len(files))
	var rec [centralLen]byte
	var vari []byte
	var read int64
	for i, f := range files {
		if _, err := io.ReadFull(br, rec[:]); err != nil || le32(rec[:]) != centralSig {
			return nil, 0, cmp.Or(readFailed(err), errCentral)
		}
		n, e, c := int(le16(rec[28:])), int(le16(rec[30:])), int(le16(rec[32:]))
		vari = slices.Grow(vari[:0], n+e+c)[:n+e+c]
		if _, err := io.ReadFull(br, vari); err != nil || string(vari[:n]) != f.Name {
			return nil, 0, cmp.Or(readFailed(err), errCentral)
		}
		read += int64(centralLen + n + e + c)
		if disk := le16(rec[34:]); disk != 0 {
			return nil, 0, onOtherDisk(f.Name, disk)
		}
		if err := checkCentralExtra(f.Name, vari[n:n+e]); err != nil {
			return nil, 0, err
		}
		off := int64(le32(rec[42:]))
		if off == uint32max {
			var ok bool
			off, ok = zip64Offset(vari[n:n+e], le32(rec[24:]) == uint32max, le32(rec[20:]) == uint32max)
			if !ok {
				return nil, 0, errCentral
			}
		}
		offsets[i] = base + off
	}
	// Go's reader reads the records by their count alone; unzip, Python, libarchive and
	// 7-Zip find the end record (or a record there) where the directory's size ends it.
	if read != dirSize {
		return nil, 0, fmt.Errorf("%w: its records take %d bytes, the end record says %d, which unzip, bsdtar and 7-Zip refuse", errDirSize, read, dirSize)
	}
	return offsets, base + dirOff, nil
}

// directoryEnd finds the end of central directory record as Go's reader does (in the last
// KiB, then in the last 65 KiB), and the zip64 one it points to when the classic one is
// maxed out. It returns where the record it used starts, and the directory's size and offset.
func directoryEnd(ra io.ReaderAt, size int64) (end, dirSize, dirOff int64, records uint64, err error) {
	var rec []byte
	for _, n := range []int64{1024, 65 * 1024} {
		n = min(n, size)
		buf := make([]byte, n)
		if _, err := ra.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return 0, 0, 0, 0, err
		}
		if p := findEOCD(buf); p >= 0 {
			rec, end = buf[p:], size-n+int64(p)
			break
		}
		if n == size {
			break
		}
	}
	if rec == nil {
		return 0, 0, 0, 0, errCentral
	}
	records16, size32, off32 := le16(rec[10:]), le32(rec[12:]), le32(rec[16:])
	if split(uint64(le16(rec[4:])), uint64(le16(rec[6:])), uint64(le16(rec[8:])), uint64(records16), 0xffff) {
		return 0, 0, 0, 0, errSplit
	}
	dirSize, dirOff, records = int64(size32), int64(off32), uint64(records16)
	// A zip64 end record is read whenever its locator is there, as Python's zipfile and
	// libarchive read it even when the classic record is not maxed out: the two must then
	// agree, or those tools would read another directory than this one.
	p, ok, err := findEOCD64(ra, end)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if ok {
		var b [eocd64Len]byte
		if _, err := ra.ReadAt(b[:], p); err != nil || le32(b[:]) != eocd64Sig {
			return 0, 0, 0, 0, cmp.Or(readFailed(err), errCentral)
		}
		if err := secondZip64End(ra, p, end); err != nil {
			return 0, 0, 0, 0, err
		}
		// The record's own size (after its first 12 bytes) must end it at its locator: unzip
		// reads what lies between as extensible data, and past the locator as an overlap.
		if le64(b[4:]) != uint64(end-eocd64LocLen-p-12) {
			return 0, 0, 0, 0, errZip64EndSize
		}
		size64, off64, records64 := int64(le64(b[40:])), int64(le64(b[48:])), le64(b[32:])
		if split(uint64(le32(b[16:])), uint64(le32(b[20:])), le64(b[24:]), records64, 0) {
			return 0, 0, 0, 0, errSplit
		}
		if records16 != 0xffff && uint64(records16) != records64 || size32 != uint32max && int64(size32) != size64 ||
			off32 != uint32max && int64(off32) != off64 {
			return 0, 0, 0, 0, errEndRecords
		}
		end, dirSize, dirOff, records = p, size64, off64, records64
	}
	if dirSize < 0 || dirOff < 0 || dirSize > size || dirOff > size {
		return 0, 0, 0, 0, errCentral
	}
	return end, dirSize, dirOff, records, nil
}

// secondDirectory is errTwoDirectories when a central directory record starts at off, where
// the end record implies the directory is, though one was found from the start of the file
// (and read as Go's reader reads it): unzip, Python and libarchive read the one at off, and
// so other entries (an archive appended to another). A read that failed is its error.
func secondDirectory(ra io.ReaderAt, off int64) error {
	var sig [4]byte
	_, err := ra.ReadAt(sig[:], off)
	switch {
	case readFailed(err) != nil:
		return readFailed(err)
	case err == nil && le32(sig[:]) == centralSig:
		return errTwoDirectories
	}
	return nil
}

// directoryShort is the error of an end record whose directory, found at dirOff from the
// start of the file as Go's reader finds it, ends base bytes before the end record: other
// tools take those for bytes before the archive, and look for the directory base bytes
// further (errTwoDirectories when one is there). A read that failed is its error.
func directoryShort(ra io.ReaderAt, base, dirOff int64) error {
	if err := secondDirectory(ra, base+dirOff); err != nil {
		return err
	}
	return fmt.Errorf("%w: %d bytes between the central directory and the end record, which unzip, Python and 7-Zip take for bytes before the archive, looking for the directory that much further", errDirSize, base)
}

// errDirSize is an end record whose directory's size is not the one it takes up to the end
// record.
var errDirSize = errors.New("damaged: the end record gives the central directory another size than it has")

// errTwoDirectories is an end record whose directory offset finds one central directory
// from the start of the file, as Go's reader takes it, and another after the bytes before
// the directory it implies, as other tools take it.
var errTwoDirectories = errors.New("damaged: the end record names two central directories (an archive appended to another?), which Go's reader and other tools (unzip, Python, libarchive) read differently")

// secondZip64End is errTwoZip64Ends when a zip64 end record lies just before the locator of
// the end record at end, and the locator names another one at p: Python's zipfile reads the
// one before the locator (it assumes no extensible data), Go's reader the one at p, and so
// each another directory (an archive with zip64 end records appended to another of the same
// layout: the locator's offset, counted in the appended archive, finds the first one's).
func secondZip64End(ra io.ReaderAt, p, end int64) error {
	q := end - eocd64LocLen - eocd64Len
	if q == p || q < 0 {
		return nil
	}
	var sig [4]byte
	_, err := ra.ReadAt(sig[:], q)
	switch {
	case readFailed(err) != nil:
		return readFailed(err)
	case err == nil && le32(sig[:]) == eocd64Sig:
		return errTwoZip64Ends
	}
	return nil
}

// errTwoZip64Ends is a zip64 locator that names one zip64 end record while another lies
// just before it.
var errTwoZip64Ends = errors.New("damaged: the zip64 locator names one zip64 end record and another lies before it (an archive appended to another?), which Go's reader and Python's zipfile read differently")

// split says whether an end record describes one part of an archive split over several
// disks: its disk number, or that of its directory's start, is not 0 (nor maxed, the classic
// record's 0xffff deferring to a zip64 one), or it counts fewer entries on its disk than in
// all. Go's reader ignores all three, while unzip -t takes the archive for the last part of
// a split one (and of a zip64 archive whose directory starts on another disk, reads
// nothing), and 7-Zip reads nothing of it.
func split(disk, dirDisk, onDisk, total, maxed uint64) bool {
	other := func(n uint64) bool { return n != 0 && (maxed == 0 || n != maxed) }
	return other(disk) || other(dirDisk) || onDisk != total
}

// errSplit is an end record of an archive split over several disks, which backup never
// writes and other tools read as a part of one.
var errSplit = errors.New("damaged: the end record describes one part of an archive split over several disks (its disk numbers, or its count of entries on this disk), which unzip and 7-Zip read as such")

// onOtherDisk is the error of a central record that says its entry, name, starts on disk,
// not the first: Go's reader, unzip and Python ignore the field, 7-Zip looks for the entry
// on that volume and reads none of it.
func onOtherDisk(name string, disk uint16) error {
	return fmt.Errorf("%w: %q on disk %d", errEntryDisk, name, disk)
}

// errEntryDisk is a central record of an entry of an archive split over several disks.
var errEntryDisk = errors.New("damaged: a central record says its entry starts on another disk of an archive split over several, where 7-Zip looks for it")

// errZip64EndSize is a zip64 end record whose size does not end it at its locator.
var errZip64EndSize = errors.New("damaged: the zip64 end record gives a size that does not end it at its locator, which unzip reads as extensible data overlapping it and 7-Zip refuses")

// errEndRecords is a zip64 end record that disagrees with the classic one.
var errEndRecords = errors.New("damaged: the zip64 end record and the classic one name different central directories")

// findEOCD returns where the last end of central directory record in b starts whose comment
// fits in b; -1 when there is none.
func findEOCD(b []byte) int {
	for i := len(b) - eocdLen; i >= 0; i-- {
		if le32(b[i:]) == eocdSig && i+eocdLen+int(le16(b[i+eocdLen-2:])) <= len(b) {
			return i
		}
	}
	return -1
}

// findEOCD64 reads the zip64 locator just before the end record at end, and returns the
// offset of the zip64 end record it names; an error only when the read failed.
func findEOCD64(ra io.ReaderAt, end int64) (int64, bool, error) {
	if end < eocd64LocLen {
		return 0, false, nil
	}
	var b [eocd64LocLen]byte
	if _, err := ra.ReadAt(b[:], end-eocd64LocLen); err != nil {
		return 0, false, readFailed(err)
	}
	if le32(b[:]) != eocd64LocSig || le32(b[4:]) != 0 || le32(b[16:]) != 1 {
		return 0, false, nil
	}
	return int64(le64(b[8:])), le64(b[8:]) < 1<<63, nil
}

// centralNameAt returns the name in the central directory record at off; "" when there is
// no record there, and an error only when a read failed.
func centralNameAt(ra io.ReaderAt, off int64) (string, error) {
	var rec [centralLen]byte
	if _, err := ra.ReadAt(rec[:], off); err != nil || le32(rec[:]) != centralSig {
		return "", readFailed(err)
	}
	name := make([]byte, le16(rec[28:]))
	if _, err := ra.ReadAt(name, off+centralLen); err != nil {
		return "", readFailed(err)
	}
	return string(name), nil
}

// readFailed is err when a read failed, nil when it only found the file ending (a record
// cut short is damage, not a failure to read). Only the bare io.EOF and ErrUnexpectedEOF
// that readers and io.ReadFull give at the end say so: one wrapped in another error (a
// bucket's body cut short in transit, after its retries) is a failed read.
func readFailed(err error) error {
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// zip64Offset reads the header offset from the zip64 field of a central record's extra
// field: it follows the sizes that are maxed out in the record, as Go's reader reads it.
func zip64Offset(extra []byte, usize, csize bool) (int64, bool) {
	field, ok := zip64Field(extra)
	skip := 0
	if usize {
		skip += 8
	}
	if csize {
		skip += 8
	}
	if !ok || len(field) < skip+8 || le64(field[skip:]) >= 1<<63 {
		return 0, false
	}
	return int64(le64(field[skip:])), true
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// extraOverflow reports a field of the zip extra block extra that runs past the block's
// end: the length it declares and the bytes left for it. Bytes too few to start a field
// (zipalign pads local headers so) are none: unzip, Python and bsdtar pass them over.
func extraOverflow(extra []byte) (need, left int, bad bool) {
	for len(extra) >= 4 {
		n := int(le16(extra[2:]))
		if extra = extra[4:]; n > len(extra) {
			return n, len(extra), true
		}
		extra = extra[n:]
	}
	return 0, 0, false
}

// checkCentralExtra is the damage of the central record of the entry name whose extra
// block extra holds a field that runs past its end: Python's zipfile refuses to open
// such an archive, and bsdtar to read the entry, where Go's reader passes over it.
func checkCentralExtra(name string, extra []byte) error {
	if need, left, bad := extraOverflow(extra); bad {
		return fmt.Errorf("damaged: the central record of %s has an extra field of %d bytes where %d remain, which Python's zipfile and bsdtar refuse",
			format.QuoteName(name), need, left)
	}
	return nil
}

// extraFields yields the fields of a zip extra block: each one's id and data. A field that
// runs past the block's end ends it, as Info-ZIP reads one.
func extraFields(extra []byte) iter.Seq2[uint16, []byte] {
	return func(yield func(uint16, []byte) bool) {
		for len(extra) >= 4 {
			id, n := le16(extra), int(le16(extra[2:]))
			extra = extra[4:]
			if n > len(extra) || !yield(id, extra[:n]) {
				return
			}
			extra = extra[n:]
		}
	}
}
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
