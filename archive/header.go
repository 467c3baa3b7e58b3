package archive

import (
	"archive/zip"
	"encoding/binary"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"backup/format"
)

const (
	creatorUnix   = 3
	zipVersion20  = 20
	zipVersion45  = 45 // zip64
	zipVersion63  = 63 // Zstandard, per APPNOTE 6.3.7
	flagDataDesc  = 0x8
	flagUTF8      = 0x800
	extTimeID     = 0x5455
	uint32max     = 1<<32 - 1
	dosEpochYear  = 1980
	dosLatestYear = 2107
)

// fileHeader builds what zip.Writer.CreateHeader would have filled in, for an entry written
// with CreateRaw from bytes compressed elsewhere. A file smaller than a chunk, or stored, has
// its sizes and CRC in the local header, as streaming readers prefer. A compressed file of a
// chunk or more may be written into the archive as it is read (see direct.go), before its
// CRC and sizes are known, so they follow its data in a data descriptor, whether it was
// streamed or not: an entry's bytes are the same either way. An entry that needs zip64
// sizes has a descriptor too, because archive/zip writes no zip64 field into local headers.
func fileHeader(name string, info fs.FileInfo, method uint16, crc uint32, compressed, size int64, meta *format.Meta) *zip.FileHeader {
	fh := baseHeader(name, info, meta)
	fh.Method = method
	fh.CRC32 = crc
	fh.CompressedSize64 = uint64(compressed)
	fh.UncompressedSize64 = uint64(size)
	version := uint16(zipVersion20)
	if streamable(method, size) || fh.CompressedSize64 >= uint32max || fh.UncompressedSize64 >= uint32max {
		fh.Flags |= flagDataDesc
	}
	if size >= zip64From {
		version = zipVersion45
	}
	if method == MethodZstd {
		version = zipVersion63
	}
	fh.ReaderVersion = version
	fh.CreatorVersion = creatorUnix<<8 | version
	return fh
}

// streamable says whether an entry of size bytes may be written as it is read. A stored
// entry is not: a reader going through the archive from the front (Java's ZipInputStream)
// cannot tell where the data of a stored entry with a data descriptor ends.
func streamable(method uint16, size int64) bool {
	return method != zip.Store && size >= chunkSize
}

// zip64From is the size from which an entry says it needs zip64 (version 4.5). The version
// goes in the local header before the data, and a streamed entry's compressed size is not
// known then; this leaves room for the compressor's overhead on data that does not shrink
// (stored blocks cost 5 bytes in 64 KiB), so that the size of the file decides alone.
const zip64From = uint32max - uint32max/16

// dirHeader builds a directory entry: its name ends in a slash and it has no data.
func dirHeader(name string, info fs.FileInfo, meta *format.Meta) *zip.FileHeader {
	fh := baseHeader(name+"/", info, meta)
	fh.Method = zip.Store
	return fh
}

func baseHeader(name string, info fs.FileInfo, meta *format.Meta) *zip.FileHeader {
	fh := &zip.FileHeader{
		Name:           name,
		CreatorVersion: creatorUnix<<8 | zipVersion20,
		ReaderVersion:  zipVersion20,
	}
	if needsUTF8Flag(name) {
		fh.Flags |= flagUTF8
	}
	fh.SetMode(info.Mode())
	setModified(fh, info.ModTime())
	if meta != nil {
		fh.Extra = addOwner(fh.Extra, meta)
		// The manifest records the very mode this header holds, whatever info the meta
		// was made from, so that verify can tell the central record's changed.
		meta.Mode = fh.ExternalAttrs >> 16
	}
	return fh
}

// needsUTF8Flag mirrors archive/zip: the flag is set only when the name is not plain ASCII,
// so readers without UTF-8 support still read ASCII names.
func needsUTF8Flag(name string) bool {
	return utf8.ValidString(name) && strings.IndexFunc(name, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0
}

// setModified writes the DOS date, clamped to the range it can hold, and the exact time in
// the extended-timestamp field, so that files dated before 1980 keep their real date.
func setModified(fh *zip.FileHeader, t time.Time) {
	t = t.UTC()
	fh.Modified = t
	dos := t
	if dos.Year() < dosEpochYear {
		dos = time.Date(dosEpochYear, 1, 1, 0, 0, 0, 0, time.UTC)
	} else if dos.Year() > dosLatestYear {
		dos = time.Date(dosLatestYear, 12, 31, 23, 59, 58, 0, time.UTC)
	}
	fh.ModifiedDate = uint16(dos.Day() + int(dos.Month())<<5 + (dos.Year()-dosEpochYear)<<9)
	fh.ModifiedTime = uint16(dos.Second()/2 + dos.Minute()<<5 + dos.Hour()<<11)
	// Info-ZIP reads the field as a signed 32-bit count of seconds since 1970.
	var ext [9]byte
	binary.LittleEndian.PutUint16(ext[0:], extTimeID)
	binary.LittleEndian.PutUint16(ext[2:], 5)
	ext[4] = 1 // modification time present
	binary.LittleEndian.PutUint32(ext[5:], uint32(int32(clampUnix32(t.Unix()))))
	fh.Extra = append(fh.Extra, ext[:]...)
}

func clampUnix32(s int64) int64 {
	return min(max(s, -1<<31), 1<<31-1)
}
