package archive

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// OpReuse names the warning of an entry of the reference whose bytes did not check out: the
// file was read from the source instead, so nothing is lost.
const OpReuse = "reuse"

// ReuseOptions say when a file counts as unchanged since the reference was made.
type ReuseOptions struct {
	// IgnoreInode and IgnoreCtime leave those out of the comparison, for file systems on
	// which they are not stable (FUSE, some network mounts), as restic's flags of these names.
	IgnoreInode bool
	IgnoreCtime bool
}

// Compression is the setting a manifest records its entries were compressed with: an
// entry is copied from a reference only when it was made with the run's own setting, so
// that the archive holds the same bytes as if every file had been read again.
type Compression struct {
	Method Method `json:"method"`
	Level  int    `json:"level"`
}

// Reference is an earlier archive of the same sources whose entries of unchanged files a
// Writer copies, compressed bytes and all, instead of reading and compressing the files
// again. It is only read.
type Reference struct {
	r       *Reader
	opts    ReuseOptions
	entries map[string]refEntry
}

// refEntry is a file of the reference: what its manifest recorded, and its entry.
type refEntry struct {
	file  File
	entry *Entry
}

// OpenReference opens the archive at path as the reference of a run compressing with
// method and level. It fails when the archive cannot be read or its manifest is missing or
// damaged; a reference made with other settings, or by a version that did not record what
// reuse compares, gives no entry to reuse (Reusable says how many it gives).
func OpenReference(path string, method Method, level int, opts ReuseOptions) (*Reference, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	if r.Manifest == nil {
		r.Close()
		if r.ManifestErr == nil {
			r.ManifestErr = errors.New("no manifest: not made by backup")
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: r.ManifestErr}
	}
	ref := &Reference{r: r, opts: opts, entries: map[string]refEntry{}}
	if c := r.Manifest.Compression; c == nil || c.Method != normalMethod(method) || c.Level != level {
		return ref, nil
	}
	entries := make(map[string]*Entry, len(r.Entries))
	for _, e := range r.Entries {
		if !e.IsDir && e.Kind == "" && !e.afterManifest {
			entries[e.Name] = e
		}
	}
	for _, f := range r.Manifest.Files {
		// A snapshot's bytes are not the file's: they are made anew each run.
		if e := entries[f.Path]; e != nil && !f.RawSHA256.IsZero() && f.Meta != nil && f.Meta.CtimeNsec != 0 && f.Snapshot == nil {
			ref.entries[f.Path] = refEntry{file: f, entry: e}
		}
	}
	return ref, nil
}

func normalMethod(m Method) Method {
	if m == "" {
		return Deflate
	}
	return m
}

// Size is the reference archive's size in bytes.
func (ref *Reference) Size() int64 { return ref.r.Size() }

// Reusable is how many of the reference's files could be reused.
func (ref *Reference) Reusable() int { return len(ref.entries) }

// Close closes the reference's file.
func (ref *Reference) Close() error { return ref.r.Close() }

// Unchanged reports whether the file stored as name, which lstat described as info, is
// unchanged since the reference: same size, mtime and ctime to the nanosecond, inode and
// mode, as restic and borg compare.
// A nil Reference has no unchanged file.
func (ref *Reference) Unchanged(name string, info fs.FileInfo) bool {
	_, ok := ref.lookup(name, info)
	return ok
}

func (ref *Reference) lookup(name string, info fs.FileInfo) (refEntry, bool) {
	if ref == nil {
		return refEntry{}, false
	}
	e, ok := ref.entries[name]
	st, isUnix := info.Sys().(*syscall.Stat_t)
	if !ok || !isUnix || !info.Mode().IsRegular() {
		return refEntry{}, false
	}
	m := e.file.Meta
	mtime := time.Unix(e.entry.Modified.Unix(), int64(m.MtimeNsec))
	same := e.file.Size == info.Size() && e.entry.Size == info.Size() &&
		mtime.Equal(info.ModTime()) && e.entry.Mode == info.Mode() &&
		(ref.opts.IgnoreCtime || m.CtimeNsec == st.Ctim.Nano()) &&
		(ref.opts.IgnoreInode || m.Ino == st.Ino)
	return e, same
}

// raw is the reference entry's compressed bytes.
func (e refEntry) raw() (io.Reader, error) {
	return e.entry.file.OpenRaw()
}

// checkRaw reads the entry's compressed bytes and compares their SHA-256 with the one the
// reference's manifest recorded. A worker does it before the entry's turn comes, so that a
// damaged reference entry is read from the source instead, never copied.
func (e refEntry) checkRaw(buf []byte) error {
	raw, err := e.raw()
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, onlyReader{raw}, buf); err != nil {
		return err
	}
	if got := Digest(h.Sum(nil)); got != e.file.RawSHA256 {
		return fmt.Errorf("reference entry damaged: its compressed bytes have SHA-256 %s, the reference's manifest says %s", got, e.file.RawSHA256)
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
	o.reread = &fs.PathError{Op: OpReuse, Path: it.name, Err: fmt.Errorf("%w; read from the file instead", err)}
	return o
}

// writeReused copies the reference's entry for it: the same compressed bytes, CRC-32 and
// sizes, under a header made from the file as this run found it, which is the header a
// fresh entry would have. The bytes are hashed again on the way: a reference changed since
// checkRaw read it fails the run rather than put bytes in the archive that nothing checked.
func (w *Writer) writeReused(it *item, e *refEntry) error {
	f := e.entry.file
	fh := fileHeader(it.name, it.info, f.Method, f.CRC32, int64(f.CompressedSize64), int64(f.UncompressedSize64), it.meta)
	zf, err := w.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	raw, err := e.raw()
	if err != nil {
		return fmt.Errorf("reading the reference: %s: %w", it.name, err)
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(zf, h), raw, w.buffer()); err != nil {
		return fmt.Errorf("copying %s from the reference: %w", it.name, err)
	}
	if Digest(h.Sum(nil)) != e.file.RawSHA256 {
		return fmt.Errorf("copying %s from the reference: the reference changed during the run", it.name)
	}
	if w.opts.OnFile != nil {
		w.opts.OnFile(File{Path: it.name, Size: e.file.Size, SHA256: e.file.SHA256, Link: it.link, Meta: it.meta,
			RawSHA256: e.file.RawSHA256, Reused: true})
	}
	return nil
}
