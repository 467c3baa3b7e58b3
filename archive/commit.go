package archive

import (
	"archive/zip"
	"encoding/hex"
	"hash"
	"io"

	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Summary describes a finished archive: its size and SHA-256, as the receipt reports them.
type Summary struct {
	Size   int64
	SHA256 string
}

// CloseManifest waits for the pipeline, appends the manifest m as the last entry, writes the
// central directory and syncs the temp file. The archive is whole but not yet at its final
// path. m is encoded as it is written, so that the manifest of a million files is never held
// whole in memory.
func (w *Writer) CloseManifest(m *Manifest) (Summary, error) {
	return w.close(m)
}

func (w *Writer) close(manifest io.WriterTo) (Summary, error) {
	if err := w.Wait(); err != nil {
		return Summary{}, err
	}
	fh := &zip.FileHeader{Name: ManifestName, Method: zip.Deflate}
	fh.SetMode(0o644)
	// The newest entry's time rather than the clock's, so that the same tree gives the same
	// archive bytes.
	fh.Modified = w.newest.UTC()
	mw, err := w.zw.CreateHeader(fh)
	if err != nil {
		return Summary{}, err
	}
	if _, err := manifest.WriteTo(mw); err != nil {
		return Summary{}, err
	}
	if err := w.zw.Close(); err != nil {
		return Summary{}, err
	}
	if err := w.buf.Flush(); err != nil {
		return Summary{}, err
	}
	if err := w.file.Sync(); err != nil {
		return Summary{}, err
	}
	return Summary{Size: w.out.n, SHA256: hex.EncodeToString(w.out.h.Sum(nil))}, nil
}

// Commit moves the closed archive to final and syncs the folder. Unless replace is set, an
// existing file at final is never replaced: Commit then fails with an error matching
// fs.ErrExist and the temp file stays for Abort to remove.
func (w *Writer) Commit(final string, replace bool) error {
	if err := w.file.Close(); err != nil {
		return err
	}
	if err := rename(w.file.Name(), final, replace); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(final))
}

// Abort stops the pipeline and removes the temp file; a no-op after a successful Commit.
// Call it on every path that does not end in Commit.
func (w *Writer) Abort() {
	w.Wait()
	w.file.Close()
	os.Remove(w.file.Name())
}

func rename(from, to string, replace bool) error {
	if replace {
		return os.Rename(from, to)
	}
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// SyncDir fsyncs a folder, so that a rename or removal in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFileAtomic writes data to path through a synced temp file in the same folder, so that
// path holds either its old content or all of data, never a part.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	sf, err := StageFile(path, data, perm)
	if err != nil {
		return err
	}
	return sf.Commit()
}

// StagedFile is a file written and synced beside its final path, waiting to be renamed into
// place: the receipt is staged before the archive is committed, so that a full disk fails
// the run before anything moves.
type StagedFile struct {
	temp, path string
}

// StageFile writes data to a synced temp file beside path.
func StageFile(path string, data []byte, perm fs.FileMode) (_ *StagedFile, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &StagedFile{temp: f.Name(), path: path}, nil
}

// Commit renames the staged file into place and syncs the folder.
func (sf *StagedFile) Commit() error {
	if err := os.Rename(sf.temp, sf.path); err != nil {
		sf.Discard()
		return err
	}
	return SyncDir(filepath.Dir(sf.path))
}

// Discard removes the staged file.
func (sf *StagedFile) Discard() { os.Remove(sf.temp) }

// countingHash passes writes on to w, counting and hashing them: the archive's size and
// SHA-256 for the receipt come from the bytes as they are written, not from a second read.
type countingHash struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}
