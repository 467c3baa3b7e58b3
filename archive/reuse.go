package archive

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"

	"backup/format"
)

// ReuseOptions say when a file counts as unchanged since the reference was made.
type ReuseOptions struct {
	// IgnoreInode and IgnoreCtime leave those out of the comparison, for file systems on
	// which they are not stable (FUSE, some network mounts), as restic's flags of these names.
	// As restic's, IgnoreInode leaves out the change time too: a file given a new inode (a
	// copied tree, a remount) has a new change time as well, so the one without the other
	// would reuse nothing.
	IgnoreInode bool
	IgnoreCtime bool
	// Unseal, when set, opens a reference that is an encrypted archive (see Unseal): its
	// file as stored is hashed against its receipt, its entries copied from its zip.
	Unseal Unseal
}

// checkRaw reads the entry's compressed bytes, after checking its local header against its
// central record, and compares their SHA-256 with the one the reference's manifest
// recorded. A worker does it before the entry's turn comes, so that a damaged reference
// entry is read from the source instead, never copied.
func (e *refEntry) checkRaw(buf []byte) error {
	data, err := dataAt(e.header(), localRef{ra: e.ra, off: e.local})
	if err != nil {
		return err
	}
	e.data = data
	h := sha256.New()
	if _, err := io.CopyBuffer(h, e.raw(), buf); err != nil {
		return err
	}
	if got := format.Digest(h.Sum(nil)); got != e.rawSHA {
		return fmt.Errorf("reference entry damaged: its compressed bytes have SHA-256 %s, the reference's manifest says %s", got, e.rawSHA)
	}
	return nil
}

// rawBufSize is the buffer a worker reads reference entries through: a new 32 KiB buffer
// per entry, as io.Copy would take, cost more than the check itself at 10,000 small files.
const rawBufSize = 256 << 10

// saveOrReuse is save for an item, unless the item's file is unchanged since the reference
// and the reference's entry checks out: then the entry is copied when its turn comes.
// Options.Fresh is asked here, by a worker, rather than as the file is queued: it may open
// the file, and the walk's goroutine is the run's critical path.
func (s *saver) saveOrReuse(ctx context.Context, it *item) outcome {
	if it.reuse != nil && s.fresh != nil && s.fresh(it.src, it.name) {
		it.reuse = nil
	}
	if it.reuse == nil {
		return s.save(ctx, it.src, it.name)
	}
	if s.rawBuf == nil {
		s.rawBuf = make([]byte, rawBufSize)
	}
	err := it.reuse.checkRaw(s.rawBuf)
	if err == nil {
		return outcome{reused: it.reuse}
	}
	o := s.save(ctx, it.src, it.name)
	o.reread = &fs.PathError{Op: format.OpReuse, Path: it.name, Err: fmt.Errorf("%w; read from the file instead", err)}
	return o
}

// writeReused copies the reference's entry for it: the same compressed bytes, CRC-32 and
// sizes, under a header made from the file as this run found it, which is the header a
// fresh entry would have. The bytes are hashed again on the way: a reference changed since
// checkRaw read it fails the run rather than put bytes in the archive that nothing checked.
func (w *Writer) writeReused(it *item, e *refEntry) error {
	fh := fileHeader(it.name, it.info, e.method, e.crc, e.csize, e.size, it.meta)
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(zf, h), e.raw(), w.buffer()); err != nil {
		return fmt.Errorf("copying %s from the reference: %w", it.name, err)
	}
	if format.Digest(h.Sum(nil)) != e.rawSHA {
		return fmt.Errorf("copying %s from the reference: the reference changed during the run", it.name)
	}
	if w.opts.OnFile != nil {
		w.opts.OnFile(format.File{Path: it.name, Size: e.size, SHA256: e.sha, Link: it.link, Meta: it.meta,
			RawSHA256: e.rawSHA, Reused: true})
	}
	return nil
}

// raw reads the entry's compressed bytes, once checkRaw has found where they are.
func (e *refEntry) raw() io.Reader {
	return io.NewSectionReader(e.ra, e.data, e.csize)
}
