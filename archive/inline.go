package archive

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"backup/format"
)

// The entry of a small unchanged file is copied from the reference by the writing goroutine
// itself, when its turn comes, rather than by a worker: handing each of the bench corpus's
// 31,000 files to a worker and back, and reading each entry with a system call of its own,
// cost more than the copy. The writer reads the reference through a window (refWindow):
// the entries of an unchanged tree follow one another there as in the walk, so one read
// serves many. The bytes are checked against the pass's keyed digest before they are
// written, as a worker checks them; an entry changed since the pass is read from its file
// instead, on the writing goroutine too.

// inlineMax is the largest compressed entry the writer copies itself; larger ones go to a
// worker, which checks them before their turn (held) or copies them straight into the
// archive (see copyReused).
const inlineMax = 64 << 10

// windowSize is how much of the reference one read of the window takes.
const windowSize = 256 << 10

// copiesInline says whether the writer copies the reference's entry e itself. An entry the
// pass found damaged goes to a worker, to be read from its file; so does every entry when a
// worker must first ask Options.Fresh, which may open the file, or read the file's extended
// attributes again through it (see reusedAttrs).
func (w *Writer) copiesInline(e *refEntry) bool {
	return e.damage == nil && e.csize <= inlineMax && w.opts.Fresh == nil && !w.opts.Xattrs
}

// writeInline copies the reference's entry of the unchanged file it, or, when its bytes are
// not those the pass found, reads the file as a worker would and writes what that gave.
func (w *Writer) writeInline(it *item) error {
	defer it.src.Release()
	e := it.reuse
	data, err := w.window.read(e)
	if err == nil && !e.sameKey(data) {
		err = errChangedSince
	}
	if err == nil {
		return w.writeReused(it, e, data, nil)
	}
	if w.fallback == nil {
		w.fallback = w.newSaver()
	}
	it.out = w.fallback.save(w.ctx, it)
	it.out.reread = &fs.PathError{Op: format.OpReuse, Path: it.name, Err: fmt.Errorf("reference entry %w; read from the file instead", err)}
	return w.writeFile(it)
}

// refWindow holds a stretch of the reference, read at once.
type refWindow struct {
	off int64
	buf []byte
}

// read returns the compressed bytes of e, from the window when it holds them, else from a
// new stretch read where they begin. They are valid until the next read.
func (r *refWindow) read(e *refEntry) ([]byte, error) {
	end := e.data + e.csize
	if e.data < r.off || end > r.off+int64(len(r.buf)) {
		if err := r.fill(e.ra, e.data, e.csize); err != nil {
			return nil, err
		}
	}
	return r.buf[e.data-r.off : end-r.off], nil
}

// fill reads the window from off on: at least need bytes, more when the file has them.
func (r *refWindow) fill(ra io.ReaderAt, off, need int64) error {
	if r.buf == nil {
		r.buf = make([]byte, windowSize)
	}
	n, err := ra.ReadAt(r.buf[:cap(r.buf)], off)
	r.off, r.buf = off, r.buf[:n]
	if int64(n) < need {
		r.buf = r.buf[:0]
		if errors.Is(err, io.EOF) {
			return errChangedSince // cut short since the pass
		}
		return err
	}
	return nil
}
