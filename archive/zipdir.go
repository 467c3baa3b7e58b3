package archive

import (
	"archive/zip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"backup/atomicfile"
)

// dirMemory is how many bytes of central records dirRecords holds before it spills them to
// a temp file: about 40,000 entries. Past that the records are written out in blocks of it.
const dirMemory = 4 << 20

// dirBlock is the size of the blocks dirRecords fills one after the other. One slice grown
// by append was copied about five times over on the writer's goroutine, each time into
// fresh pages: a third of the page faults of an unchanged set run of the bench corpus
// (whose central directory is 3 MB), and 5% of its CPU time. A block holds any record,
// whose name, extra field and comment are at most 64 KiB each.
const dirBlock = 256 << 10

// dirRecords are the central directory's records, encoded as each entry is whole: in
// memory up to dirMemory, then in an unlinked temp file in the spool folder.
type dirRecords struct {
	spoolDir string
	// blocks hold the records in memory, in order: those before cur are full, those past
	// it empty, kept from before a spill.
	blocks [][]byte
	cur    int
	held   int // bytes in blocks
	file   *os.File
	count  uint64
	last   int // the length of the last record added
}

// add encodes fh's central record, its local header being at off, as zip.Writer.Close
// does.
func (d *dirRecords) add(fh *zip.FileHeader, off uint64) error {
	need := centralLen + len(fh.Name) + len(fh.Extra) + zip64ExtraLen + len(fh.Comment)
	if len(d.blocks) == 0 {
		d.blocks = append(d.blocks, make([]byte, 0, dirBlock))
	}
	if b := d.blocks[d.cur]; cap(b)-len(b) < need {
		d.cur++
		if d.cur == len(d.blocks) {
			d.blocks = append(d.blocks, make([]byte, 0, dirBlock))
		}
	}
	n := len(d.blocks[d.cur])
	d.blocks[d.cur] = appendCentral(d.blocks[d.cur], fh, off)
	d.last = len(d.blocks[d.cur]) - n
	d.held += d.last
	d.count++
	if d.held < dirMemory {
		return nil
	}
	return d.spill()
}

func (d *dirRecords) spill() error { return spoolErr(d.spoolDir, d.spillFile()) }

func (d *dirRecords) spillFile() error {
	if d.file == nil {
		f, err := atomicfile.CreateUnnamed(d.spoolDir)
		if err != nil {
			return err
		}
		d.file = f
	}
	if err := d.writeBlocks(d.file); err != nil {
		return err
	}
	for i := range d.blocks {
		d.blocks[i] = d.blocks[i][:0]
	}
	d.cur, d.held = 0, 0
	return nil
}

func (d *dirRecords) writeBlocks(w io.Writer) error {
	for _, b := range d.blocks[:min(d.cur+1, len(d.blocks))] {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// writeTo writes every record, in the order added, and releases the temp file.
func (d *dirRecords) writeTo(w io.Writer) error {
	if f := d.file; f != nil {
		d.file = nil
		defer f.Close()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyBuffer(w, onlyReader{f}, make([]byte, 1<<20)); err != nil {
			return err
		}
	}
	err := d.writeBlocks(w)
	d.blocks = nil
	return err
}

// close releases the temp file, if any; for a writer given up.
func (d *dirRecords) close() {
	if d.file != nil {
		d.file.Close()
		d.file = nil
	}
}

// zip64ExtraLen is the length of the zip64 field appendCentral may add.
const zip64ExtraLen = 28

// appendCentral appends fh's central record, with a zip64 field when its sizes or offset
// need one.
func appendCentral(b []byte, fh *zip.FileHeader, off uint64) []byte {
	le := binary.LittleEndian
	extra := fh.Extra
	b = le.AppendUint32(b, centralSig)
	b = le.AppendUint16(b, fh.CreatorVersion)
	b = le.AppendUint16(b, fh.ReaderVersion)
	b = le.AppendUint16(b, fh.Flags)
	b = le.AppendUint16(b, fh.Method)
	b = le.AppendUint16(b, fh.ModifiedTime)
	b = le.AppendUint16(b, fh.ModifiedDate)
	b = le.AppendUint32(b, fh.CRC32)
	zip64 := fh.CompressedSize64 >= uint32max || fh.UncompressedSize64 >= uint32max || off >= uint32max
	if zip64 {
		b = le.AppendUint32(b, uint32max)
		b = le.AppendUint32(b, uint32max)
		var z [zip64ExtraLen]byte
		le.PutUint16(z[0:], zip64ExtraID)
		le.PutUint16(z[2:], 24)
		le.PutUint64(z[4:], fh.UncompressedSize64)
		le.PutUint64(z[12:], fh.CompressedSize64)
		le.PutUint64(z[20:], off)
		extra = append(extra[:len(extra):len(extra)], z[:]...)
	} else {
		b = le.AppendUint32(b, uint32(fh.CompressedSize64))
		b = le.AppendUint32(b, uint32(fh.UncompressedSize64))
	}
	b = le.AppendUint16(b, uint16(len(fh.Name)))
	b = le.AppendUint16(b, uint16(len(extra)))
	b = le.AppendUint16(b, uint16(len(fh.Comment)))
	b = le.AppendUint32(b, 0) // disk number start, internal attributes
	b = le.AppendUint32(b, fh.ExternalAttrs)
	b = le.AppendUint32(b, uint32(min(off, uint32max)))
	b = append(b, fh.Name...)
	b = append(b, extra...)
	return append(b, fh.Comment...)
}

// CreateHeader starts the manifest's entry, deflated as it is written, as
// zip.Writer.CreateHeader does with Method Deflate: a data descriptor follows the data.
func (z *zipWriter) CreateHeader(fh *zip.FileHeader) (io.Writer, error) {
	if err := z.prepare(); err != nil {
		return nil, err
	}
	z.owed = nil
	if valid, require := detectUTF8(fh.Name); fh.NonUTF8 {
		fh.Flags &^= flagUTF8
	} else if valid && require {
		fh.Flags |= flagUTF8
	}
	fh.CreatorVersion = fh.CreatorVersion&0xff00 | zipVersion20
	fh.ReaderVersion = zipVersion20
	if !fh.Modified.IsZero() {
		fh.ModifiedDate, fh.ModifiedTime = msDosTime(fh.Modified)
		var ext [9]byte
		binary.LittleEndian.PutUint16(ext[0:], extTimeID)
		binary.LittleEndian.PutUint16(ext[2:], 5)
		ext[4] = 1
		binary.LittleEndian.PutUint32(ext[5:], uint32(fh.Modified.Unix()))
		fh.Extra = append(fh.Extra, ext[:]...)
	}
	fh.Flags |= flagDataDesc
	e := &deflateEntry{fh: fh, off: uint64(z.cw.n), out: &passCounter{w: z.cw}, crc: crc32.NewIEEE()}
	if err := writeLocal(z.cw, fh, false); err != nil {
		return nil, err
	}
	// Only now, with nothing left to fail: abort stops the pool of the entry in z.open.
	comp, err := newChunkWriter(e.out, z.files)
	if err != nil {
		return nil, err
	}
	e.comp = comp
	z.open = e
	return e, nil
}

// abort stops deflating the manifest, if it was being written, and removes the central
// directory's spill file: for a Writer that is not to be committed.
func (z *zipWriter) abort() {
	if z.open != nil {
		z.open.comp.abort()
		z.open = nil
	}
	z.dir.close()
}

// closeDeflate finishes the manifest's entry: the deflate stream, its descriptor, its
// central record.
func (z *zipWriter) closeDeflate() error {
	e := z.open
	z.open = nil
	if err := e.comp.Close(); err != nil {
		return err
	}
	fh := e.fh
	fh.CRC32 = e.crc.Sum32()
	fh.CompressedSize64, fh.UncompressedSize64 = uint64(e.out.n), uint64(e.n)
	fh.CompressedSize, fh.UncompressedSize = uint32(fh.CompressedSize64), uint32(fh.UncompressedSize64)
	if fh.CompressedSize64 >= uint32max || fh.UncompressedSize64 >= uint32max {
		fh.CompressedSize, fh.UncompressedSize = uint32max, uint32max
		fh.ReaderVersion = zipVersion45
	}
	if _, err := z.cw.Write(descriptor(fh)); err != nil {
		return err
	}
	return z.dir.add(fh, e.off)
}

// msDosTime is archive/zip's timeToMsDosTime: the date and time as MS-DOS stores them.
func msDosTime(t time.Time) (date, tm uint16) {
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

// detectUTF8 is archive/zip's: whether s is valid UTF-8, and whether it needs the UTF-8
// flag (a character outside the part of ASCII every code page agrees on).
func detectUTF8(s string) (valid, require bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r < 0x20 || r > 0x7d || r == 0x5c {
			if !utf8.ValidRune(r) || (r == utf8.RuneError && size == 1) {
				return false, false
			}
			require = true
		}
	}
	return true, require
}
