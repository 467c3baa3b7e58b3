package archive

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
)

// Reasons an entry fails its check; they are the text of a Problem.
var (
	errCRC       = errors.New("crc-32 mismatch")
	errSHA256    = errors.New("sha256 mismatch")
	errEncrypted = errors.New("encrypted (not supported)")
	errDamaged   = errors.New("damaged: not a valid zip entry, or more data than its header declares")
	errCut       = errors.New("damaged: data cut short")
)

// copyBufSize is the buffer each entry is streamed through: memory stays this, whatever the
// size of the entry.
const copyBufSize = 128 << 10

// openEntry opens the data of f for reading. Reading it to the end fails unless the data
// match the CRC-32 and the size in the header: Go's reader skips the CRC check when the
// header says 0, which a hostile archive can use, so the CRC is computed here as well.
func openEntry(f *zip.File) (io.ReadCloser, error) {
	if f.Flags&0x1 != 0 {
		return nil, errEncrypted
	}
	rc, err := f.Open()
	if err != nil {
		return nil, entryError(f, err)
	}
	return &crcReader{rc: rc, f: f, crc: crc32.NewIEEE()}, nil
}

type crcReader struct {
	rc  io.ReadCloser
	f   *zip.File
	crc hash.Hash32
	n   uint64
}

func (r *crcReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.crc.Write(p[:n])
	r.n += uint64(n)
	if err == io.EOF {
		switch {
		case r.n != r.f.UncompressedSize64:
			return n, errCut
		case r.crc.Sum32() != r.f.CRC32:
			return n, errCRC
		}
		return n, io.EOF
	}
	if err != nil {
		return n, entryError(r.f, err)
	}
	return n, nil
}

func (r *crcReader) Close() error { return r.rc.Close() }

// entryError words an error of Go's zip reader or of the decompressor.
func entryError(f *zip.File, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return errCRC
	case errors.Is(err, zip.ErrAlgorithm):
		return fmt.Errorf("unsupported compression method %d", f.Method)
	case errors.Is(err, zip.ErrFormat):
		return errDamaged
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errCut
	case errors.As(err, &corrupt):
		return fmt.Errorf("damaged: compressed data corrupt at byte %d", int64(corrupt))
	}
	return err
}

// Checked is what reading one entry found.
type Checked struct {
	Size   int64
	SHA256 string
}

// copyChecked streams the data of e into w, checking its CRC-32, its size and, when want is
// not "", its SHA-256 (hex). A nil error means every byte written to w is right. An error
// of w comes back as a *writeError; any other error is a problem with the entry.
func copyChecked(w io.Writer, e *Entry, want string, buf []byte) (Checked, error) {
	rc, err := openEntry(e.file)
	if err != nil {
		return Checked{}, err
	}
	defer rc.Close()
	sum := sha256.New()
	ww := &errWriter{w: w}
	n, err := io.CopyBuffer(io.MultiWriter(ww, sum), onlyReader{rc}, buf)
	if ww.err != nil {
		return Checked{}, &writeError{ww.err}
	}
	if err != nil {
		return Checked{}, err
	}
	got := Checked{Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}
	if want != "" && got.SHA256 != want {
		return got, errSHA256
	}
	return got, nil
}

// onlyReader hides a WriterTo or ReaderFrom, so that io.CopyBuffer uses the bounded buffer.
type onlyReader struct{ io.Reader }

// writeError is a failure to write out an entry's data, as opposed to a problem with it.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}
