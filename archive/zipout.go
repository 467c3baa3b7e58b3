package archive

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"strings"
)

// zipWriter writes the archive's zip structure: the bytes archive/zip's Writer writes, to
// the byte, for the entries backup makes (CreateRaw for every entry, CreateHeader with
// Deflate for the manifest, its compressor a chunkWriter), but its central directory is not a list of FileHeaders held
// until Close. Each entry's central record is encoded as soon as the entry is whole, into a
// dirRecords that spills to a temp file in the spool folder: at a million files Go's list
// (a FileHeader, its header and its extra fields for each entry) was 190 MB of the run's
// heap. It also knows when it owes a data descriptor: the last entry's, which it writes
// only when the next entry starts.
type zipWriter struct {
	cw    *passCounter // over the archive's hashedOut, which buffers the small writes
	dir   *dirRecords
	open  *deflateEntry // the manifest's, being written; nil otherwise
	owed  *zip.FileHeader
	files *chunkPool // the files' pool: the manifest is deflated with its buffers, by as many workers
	// lastRecord is, once Close has written the central directory, where its last record
	// is: the manifest's, which ReadBack checks first (see sendManifest).
	lastRecord manifestAt
}

func newZipWriter(out io.Writer, spoolDir string, files *chunkPool) *zipWriter {
	return &zipWriter{cw: &passCounter{w: out}, dir: &dirRecords{spoolDir: spoolDir}, files: files}
}

var (
	errZipLongName  = errors.New("zip: FileHeader.Name too long")
	errZipLongExtra = errors.New("zip: FileHeader.Extra too long")
)

// CreateRaw starts an entry whose bytes, already compressed, the caller writes, as
// zip.Writer.CreateRaw does.
func (z *zipWriter) CreateRaw(fh *zip.FileHeader) (io.Writer, error) {
	w, err := z.createRaw(fh)
	if err == nil && fh.Flags&flagDataDesc != 0 && !strings.HasSuffix(fh.Name, "/") {
		z.owed = fh
	}
	return w, err
}

// createRaw is CreateRaw for an entry whose descriptor, if any, is written already (see
// direct.go): it is not owed.
func (z *zipWriter) createRaw(fh *zip.FileHeader) (io.Writer, error) {
	if err := z.prepare(); err != nil {
		return nil, err
	}
	fh.CompressedSize = uint32(min(fh.CompressedSize64, uint32max))
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, uint32max))
	off := uint64(z.cw.n)
	if err := writeLocal(z.cw, fh, true); err != nil {
		return nil, err
	}
	if err := z.dir.add(fh, off); err != nil {
		return nil, err
	}
	return z.cw, nil
}

// written records an entry of n bytes, fh's local header, data and descriptor, that was
// written around the zipWriter (see direct.go), at the offset the next entry would have
// had: its central record counts it, and the next entry starts after it.
func (z *zipWriter) written(fh *zip.FileHeader, n int64) error {
	fh.CompressedSize = uint32(min(fh.CompressedSize64, uint32max))
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, uint32max))
	if err := z.dir.add(fh, uint64(z.cw.n)); err != nil {
		return err
	}
	z.cw.n += n
	return nil
}

// prepare finishes the entry before: the owed descriptor, or the manifest's deflate stream.
func (z *zipWriter) prepare() error {
	if z.open != nil {
		return z.closeDeflate()
	}
	if fh := z.owed; fh != nil {
		z.owed = nil
		_, err := z.cw.Write(descriptor(fh))
		return err
	}
	return nil
}

// writeLocal writes fh's local header as archive/zip's writeHeader does.
func writeLocal(w io.Writer, fh *zip.FileHeader, raw bool) error {
	if len(fh.Name) > 0xffff {
		return errZipLongName
	}
	if len(fh.Extra) > 0xffff {
		return errZipLongExtra
	}
	_, err := w.Write(localHeaderFor(fh, raw))
	return err
}

// localHeaderFor is fh's local header: with its CRC-32 and sizes for a raw entry without a
// data descriptor, else with zeros there, as archive/zip writes it.
func localHeaderFor(fh *zip.FileHeader, raw bool) []byte {
	b := make([]byte, localLen, localLen+len(fh.Name)+len(fh.Extra))
	binary.LittleEndian.PutUint32(b, localSig)
	binary.LittleEndian.PutUint16(b[4:], fh.ReaderVersion)
	binary.LittleEndian.PutUint16(b[6:], fh.Flags)
	binary.LittleEndian.PutUint16(b[8:], fh.Method)
	binary.LittleEndian.PutUint16(b[10:], fh.ModifiedTime)
	binary.LittleEndian.PutUint16(b[12:], fh.ModifiedDate)
	if raw && fh.Flags&flagDataDesc == 0 {
		binary.LittleEndian.PutUint32(b[14:], fh.CRC32)
		binary.LittleEndian.PutUint32(b[18:], uint32(min(fh.CompressedSize64, uint32max)))
		binary.LittleEndian.PutUint32(b[22:], uint32(min(fh.UncompressedSize64, uint32max)))
	}
	binary.LittleEndian.PutUint16(b[26:], uint16(len(fh.Name)))
	binary.LittleEndian.PutUint16(b[28:], uint16(len(fh.Extra)))
	return append(append(b, fh.Name...), fh.Extra...)
}

// Close finishes the last entry and writes the central directory and its end records, as
// zip.Writer.Close does.
func (z *zipWriter) Close() error {
	if err := z.prepare(); err != nil {
		return err
	}
	start := z.cw.n
	if err := z.dir.writeTo(z.cw); err != nil {
		return err
	}
	end := z.cw.n
	if z.dir.count > 0 {
		z.lastRecord = manifestAt{off: end - int64(z.dir.last), index: int(z.dir.count) - 1, ok: true}
	}
	_, err := z.cw.Write(endRecords(z.dir.count, uint64(end-start), uint64(start), uint64(end)))
	return err
}

// endRecords are the zip64 end records when they are needed, and the end record.
func endRecords(records, size, offset, end uint64) []byte {
	var b []byte
	le := binary.LittleEndian
	if records >= 0xffff || size >= uint32max || offset >= uint32max {
		b = le.AppendUint32(b, eocd64Sig)
		b = le.AppendUint64(b, eocd64Len-12)
		b = le.AppendUint16(b, zipVersion45)
		b = le.AppendUint16(b, zipVersion45)
		b = le.AppendUint64(b, 0) // this disk, and the directory's
		b = le.AppendUint64(b, records)
		b = le.AppendUint64(b, records)
		b = le.AppendUint64(b, size)
		b = le.AppendUint64(b, offset)
		b = le.AppendUint32(b, eocd64LocSig)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, end)
		b = le.AppendUint32(b, 1)
		records, size, offset = 0xffff, uint32max, uint32max
	}
	b = le.AppendUint32(b, eocdSig)
	b = le.AppendUint32(b, 0) // this disk, and the directory's
	b = le.AppendUint16(b, uint16(records))
	b = le.AppendUint16(b, uint16(records))
	b = le.AppendUint32(b, uint32(size))
	b = le.AppendUint32(b, uint32(offset))
	return le.AppendUint16(b, 0) // no comment
}

// passCounter counts what it passes on: the offset of the next entry.
type passCounter struct {
	w io.Writer
	n int64
}

func (c *passCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// deflateEntry is the manifest's entry while it is written: deflated, with its CRC-32 and
// sizes counted for the descriptor that follows it.
type deflateEntry struct {
	fh   *zip.FileHeader
	off  uint64
	comp *chunkWriter // deflating on all cores
	out  *passCounter // the compressed bytes
	crc  hash.Hash32
	n    int64 // the uncompressed bytes
}

func (e *deflateEntry) Write(p []byte) (int, error) {
	e.crc.Write(p)
	e.n += int64(len(p))
	return e.comp.Write(p)
}
