package archive

import (
	"archive/zip"
	"encoding/binary"
	"io/fs"
	"strings"
	"time"

	"backup/format"
	"backup/skiprules"
)

// Entry is one entry of an archive being read, as list and restore see it. Its fields are
// in the order that packs them into 176 bytes, without padding: verify holds a million.
type Entry struct {
	// Name is the stored name, without the trailing slash of a directory entry.
	Name string
	// Kind is set for an entry that is neither a regular file nor a directory: a symlink that
	// backup stored (its manifest lists it, and restore creates it), or a symlink, device,
	// FIFO or socket that another tool stored (restore lists these and never creates them).
	Kind skiprules.Kind
	// Target is the target the manifest records for a symlink, so that it is known without
	// reading the entry's data; "" without a manifest or a record of it.
	Target string
	// Size is the uncompressed size that the entry's header declares.
	Size int64
	// Modified is the modification time, exact to the second for dates before 1980 and
	// before 1970 too (see modTime).
	Modified time.Time

	hdr   entryHeader // what the checks of its headers and data need of its central record
	local localRef    // where its local header is

	// Mode holds the type and permission bits the entry was stored with; for an entry that
	// holds no Unix mode (made on DOS or Windows, or with a mode of 0), those restore gives
	// it before the umask (see Perm).
	Mode fs.FileMode
	// UID and GID are the owner an Info-ZIP ux extra field holds, when HasOwner.
	UID, GID uint32
	// Host is the system the entry was made on, which decides what its name means.
	Host Host
	// IsDir is set for a directory entry.
	IsDir    bool
	HasOwner bool
	// noUnixMode says the archive holds no Unix mode for the entry: Mode is a default,
	// narrowed by the umask when restored.
	noUnixMode bool
}

// Type names the entry's type as list shows it: "file", "dir" or the Kind.
func (e *Entry) Type() string {
	switch {
	case e.IsDir:
		return "dir"
	case e.Kind != "":
		return string(e.Kind)
	}
	return "file"
}

// StoredName is the name as the archive holds it, without a leading "./" (see dotSlash):
// a directory's name ends in a slash. The entry for the folder it is restored into is "./".
func (e *Entry) StoredName() string {
	switch {
	case e.IsRoot():
		return "./"
	case e.IsDir:
		return e.Name + "/"
	}
	return e.Name
}

// IsRoot reports whether e is the entry "./": the folder the archive is extracted into,
// which bsdtar stores first in an archive of ".". Restore passes it over: unzip and
// Python's zipfile leave that folder as it is.
func (e *Entry) IsRoot() bool { return e.Name == "" && e.IsDir && e.hdr.bits&hdrDotSlash != 0 }

// rawName is the name as the archive holds it, byte for byte: what its local header must
// repeat.
func (e *Entry) rawName() string {
	name := e.Name
	if e.hdr.bits&hdrDotSlash != 0 {
		name = "./" + name
		if name == "./" {
			name = "."
		}
	}
	if e.hdr.slash() {
		name += "/"
	}
	return name
}

// dotSlash takes the "./" from the front of name, a stored name without a directory's
// slash, as bsdtar writes before each name of an archive of "." (Windows' tar.exe too):
// unzip, 7-Zip, bsdtar and Python's zipfile extract "./a" as "a". The entry "./" itself
// becomes "". A name of the manifest's is left as it is, and refused: one entry is the
// manifest.
func dotSlash(name string, isDir bool) (string, bool) {
	if name == "." && isDir {
		return "", true
	}
	rest, ok := strings.CutPrefix(name, "./")
	if !ok || rest == "" || rest == format.ManifestName {
		return name, false
	}
	return rest, true
}

// restoredMode is the mode an entry of the header f is restored with, and whether it is a
// default rather than the archive's (see restoreMode); a special entry's is its own.
func restoredMode(f *zip.FileHeader) (fs.FileMode, bool) {
	mode := f.Mode()
	switch {
	case strings.HasSuffix(f.Name, "/") || mode.IsDir():
		return restoreMode(f, fs.ModeDir|mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	case mode.IsRegular():
		return restoreMode(f, mode)
	}
	return mode, false
}

func newEntry(f *zip.File) *Entry {
	mode := f.Mode()
	e := &Entry{
		Name:     f.Name,
		Mode:     mode,
		Size:     int64(f.UncompressedSize64),
		Modified: modTime(&f.FileHeader),
		Host:     Host(f.CreatorVersion >> 8),
		hdr: entryHeader{method: f.Method, flags: f.Flags, crc: f.CRC32, csize: f.CompressedSize64,
			extra: uint16(len(f.Extra)), dosTime: f.ModifiedTime, dosDate: f.ModifiedDate, needs: uint8(f.ReaderVersion)},
	}
	if strings.HasSuffix(f.Name, "/") {
		e.hdr.bits |= hdrSlash
	}
	if _, ok := extMtime(f.Extra); ok {
		e.hdr.bits |= hdrExtTime
	}
	if otherUnicodeName(f.Name, f.Extra) {
		e.hdr.bits |= hdrOtherName
	}
	e.UID, e.GID, e.HasOwner = ownerField(f.Extra)
	e.Mode, e.noUnixMode = restoredMode(&f.FileHeader)
	switch {
	case strings.HasSuffix(f.Name, "/") || mode.IsDir():
		e.IsDir = true
		e.Name = strings.TrimSuffix(f.Name, "/")
	case mode.IsRegular():
	default:
		e.Kind = skiprules.KindOf(mode)
		if e.Kind == "" {
			e.Kind = skiprules.KindOther
		}
	}
	if name, ok := dotSlash(e.Name, e.IsDir); ok {
		e.Name = name
		e.hdr.bits |= hdrDotSlash
	}
	return e
}

// entryHeader is what an Entry keeps of its central record beside its own fields, rather
// than Go's zip.File (about 280 bytes with its name and extra field, for each entry, for as
// long as the archive is open): the checks of its headers and data get a zip.File made
// from it (file).
type entryHeader struct {
	csize  uint64
	crc    uint32
	method uint16
	flags  uint16
	extra  uint16 // the length of its extra field, which verify's read-ahead expects locally too
	// dosTime and dosDate are its MS-DOS time, which the local header must repeat.
	dosTime, dosDate uint16
	bits             uint8 // hdrSlash, hdrAfterManifest, hdrExtTime, hdrOtherName, hdrDotSlash; one byte keeps Entry at 144
	// needs is the version of the zip format it needs to extract (the low byte, the one
	// unzip compares), in the byte bits leaves free.
	needs uint8
}

// The bits of an entryHeader. Here, not in Entry, where they would make an Entry 8 bytes
// longer.
const (
	hdrSlash uint8 = 1 << iota // the stored name ends in a slash
	// hdrAfterManifest says it is stored after the manifest, which backup writes last.
	hdrAfterManifest
	// hdrExtTime says its central record has an extended timestamp with the modification
	// time: Modified is that time, which the local header's must be.
	hdrExtTime
	// hdrOtherName says its central record's Unicode Path field gives it another name.
	hdrOtherName
	// hdrDotSlash says its stored name has a "./" before Name (see dotSlash).
	hdrDotSlash
)

func (h *entryHeader) slash() bool         { return h.bits&hdrSlash != 0 }
func (h *entryHeader) afterManifest() bool { return h.bits&hdrAfterManifest != 0 }

// file is the central record of e, as far as the checks of its headers and data read it.
func (e *Entry) file() *zip.File {
	return &zip.File{FileHeader: zip.FileHeader{Name: e.rawName(), ReaderVersion: uint16(e.hdr.needs), Method: e.hdr.method, Flags: e.hdr.flags, CRC32: e.hdr.crc,
		CompressedSize64: e.hdr.csize, UncompressedSize64: uint64(e.Size),
		ModifiedTime: e.hdr.dosTime, ModifiedDate: e.hdr.dosDate, Extra: e.metaExtra(),
		ExternalAttrs: e.dirAttr()}}
}

// msdosDir is the MS-DOS directory attribute of a zip's external attributes.
const msdosDir = 0x10

// dirAttr is what file gives of e's kind in its external attributes (of "made by" host 0,
// MS-DOS): the directory attribute for a directory, so that checkMethod can tell one that
// is a directory by its mode alone, its name without the trailing slash.
func (e *Entry) dirAttr() uint32 {
	if e.IsDir {
		return msdosDir
	}
	return 0
}

// modTime reads the Info-ZIP extended timestamp (0x5455) as the signed 32-bit count of
// seconds that Info-ZIP writes and reads, and backup's writer too. Go's reader takes it as
// unsigned, which turns a date before 1970 into one after 2038. Go's writer, though, writes
// it unsigned: a negative reading is taken as unsigned when the DOS date is nearer to that.
// Without the field, Go's reading of the NTFS or Info-ZIP "UX" field stands; without any,
// the DOS date and time are the local time of the host that wrote them (Python's zipfile,
// the JDK's jar, Windows), which unzip, bsdtar, 7-Zip and Python take in this host's zone:
// Go takes them as UTC, hours off.
func modTime(f *zip.FileHeader) time.Time {
	for id, field := range extraFields(f.Extra) {
		if id != extTimeID || len(field) < 5 || field[0]&1 == 0 {
			continue
		}
		raw := binary.LittleEndian.Uint32(field[1:])
		signed := time.Unix(int64(int32(raw)), 0).UTC()
		if int32(raw) < 0 {
			unsigned := time.Unix(int64(raw), 0).UTC()
			dos := dosTime(f.ModifiedDate, f.ModifiedTime)
			// Go's writer writes the DOS date of the time itself (in its zone): an unsigned
			// reading is that date within a day or so. backup's and Info-ZIP's clamp it to
			// 1980 for a date before then, which 2038+ can be nearer to than 1901-1912.
			if d := absDuration(unsigned.Sub(dos)); d < 48*time.Hour && d < absDuration(signed.Sub(dos)) {
				return unsigned
			}
		}
		return signed
	}
	if m := f.Modified; m.Location() == time.UTC && m.Equal(dosTime(f.ModifiedDate, f.ModifiedTime)) {
		return time.Date(m.Year(), m.Month(), m.Day(), m.Hour(), m.Minute(), m.Second(), 0, time.Local)
	}
	return f.Modified
}

// dosTime decodes an MS-DOS date and time, taken as UTC (they are local time for most
// tools: a few hours do not matter for telling 1960 from 2096).
func dosTime(date, tm uint16) time.Time {
	return time.Date(int(date>>9)+dosEpochYear, time.Month(date>>5&0xf), int(date&0x1f),
		int(tm>>11), int(tm>>5&0x3f), int(tm&0x1f)*2, 0, time.UTC)
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
