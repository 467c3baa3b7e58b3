package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"

	"backup/format"
)

// A large entry whose turn has come is written straight into the archive by the worker
// reading it, rather than into a spool that the writing goroutine copies into the archive
// later: on a 4 GiB file, writing and reading the spool back was most of the run's system
// time. The writing goroutine, waiting for that entry, hands the archive to its worker
// (item.head); entries behind it are spooled as before. Its CRC-32 and sizes are known only
// after the data, so they follow it in a data descriptor, as they do for every entry that
// could be streamed (see fileHeader): the bytes of an entry do not depend on whether it was.
//
// A file whose read fails half way must leave no partial entry. So the streamed bytes go
// around the zipWriter, straight into the archive's hash and temp file, and can be taken
// back: the file is truncated to where the entry began and the hash restored to its state
// there. Once the entry is whole, the zipWriter is told of it (written): its central record
// and the offset of the entry after it count it.

// directOut is where a large entry's compressed bytes go once its turn has come.
type directOut struct {
	w      *Writer
	head   <-chan struct{} // closed when the writing goroutine hands over the archive
	fh     *zip.FileHeader // as far as known before the data
	header []byte          // the local header written
	start  int64           // where it starts in the archive
	state  hashState       // the archive's hashes there
	on     bool            // writing into the archive
	done   bool            // the entry is whole and counted: nothing to take back
}

// ready says whether the bytes may go into the archive now: the entry's turn has come.
func (d *directOut) ready() bool {
	if d.on {
		return true
	}
	select {
	case <-d.head:
		return true
	default:
		return false
	}
}

// begin writes the local header and what sp holds so far into the archive; the caller owns
// the archive from now until the entry is done.
func (d *directOut) begin(sp *spool) error {
	if err := d.open(); err != nil {
		return err
	}
	_, err := sp.copyTo(d.w.out, d.w.buffer())
	sp.drop()
	return err
}

// open writes the local header into the archive, where the entry begins.
func (d *directOut) open() error {
	w := d.w
	// The entry before may owe its descriptor: written now, and everything buffered (by
	// state), so that the archive file ends where this entry starts.
	if err := w.zw.prepare(); err != nil {
		return err
	}
	state, err := w.out.state()
	if err != nil {
		return err
	}
	d.start, d.state, d.header = w.out.n, state, localHeaderFor(d.fh, false)
	d.on = true
	_, err = w.out.Write(d.header)
	return err
}

// rollback takes back what was written of the entry. A failure to do so is the run's: the
// archive would hold part of an entry.
func (d *directOut) rollback() {
	w := d.w
	d.on = false
	err := w.out.Flush()
	if err == nil {
		err = w.file.Truncate(d.start)
	}
	if err == nil {
		_, err = w.file.Seek(d.start, io.SeekStart)
	}
	if err == nil {
		err = w.out.restore(d.state, d.start)
	}
	if err != nil {
		w.setErr(err)
	}
}

var errStreamedHeader = errors.New("a streamed entry's local header differs from the one its final header makes")

// finish writes the descriptor after the entry's data, fh being its final header, and
// tells the zipWriter of the entry. On the writing goroutine.
func (d *directOut) finish(fh *zip.FileHeader) error {
	w := d.w
	if !bytes.Equal(localHeaderFor(fh, false), d.header) {
		return errStreamedHeader
	}
	desc := descriptor(fh)
	if _, err := w.out.Write(desc); err != nil {
		return err
	}
	if err := w.zw.written(fh, int64(len(d.header))+int64(fh.CompressedSize64)+int64(len(desc))); err != nil {
		return err
	}
	d.done = true
	w.streamed++
	return nil
}

// descriptor is the data descriptor archive/zip writes after a raw entry: with its
// signature, and sizes of 8 bytes when either is too large for 4.
func descriptor(fh *zip.FileHeader) []byte {
	b := binary.LittleEndian.AppendUint32(nil, descriptorSig)
	b = binary.LittleEndian.AppendUint32(b, fh.CRC32)
	if fh.CompressedSize64 >= uint32max || fh.UncompressedSize64 >= uint32max {
		b = binary.LittleEndian.AppendUint64(b, fh.CompressedSize64)
		return binary.LittleEndian.AppendUint64(b, fh.UncompressedSize64)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(fh.CompressedSize64))
	return binary.LittleEndian.AppendUint32(b, uint32(fh.UncompressedSize64))
}

// reused returns where the reference's entry e goes, for the file info stored as name, when
// it may be copied straight into the archive: an entry whose header owes a descriptor, as a
// streamed entry's does; nil otherwise.
func (t *directTo) reused(name string, info fs.FileInfo, e *refEntry) *directOut {
	if t == nil {
		return nil
	}
	fh := fileHeader(name, info, e.method, e.crc, e.csize, e.size, t.meta)
	if fh.Flags&flagDataDesc == 0 {
		return nil
	}
	return &directOut{w: t.w, head: t.head, fh: fh}
}

// directTo is what a worker needs to stream the file it reads: the Writer, and what the
// entry's header holds besides the file's fstat.
type directTo struct {
	w    *Writer
	head <-chan struct{}
	meta *format.Meta
}

// out returns where the compressed bytes of the file name go, if it may be streamed; nil
// otherwise. before is its fstat before reading.
func (t *directTo) out(name string, before fs.FileInfo, comp *encoder) *directOut {
	if t == nil || comp.stores() || !streamable(comp.zipMethod(), before.Size()) {
		return nil
	}
	fh := fileHeader(name, before, comp.zipMethod(), 0, 0, before.Size(), t.meta)
	return &directOut{w: t.w, head: t.head, fh: fh}
}
