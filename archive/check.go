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
	"strings"

	"github.com/klauspost/compress/flate"
)

// Reasons an entry fails its check; they are the text of a Problem.
var (
	errCRC       = errors.New("crc-32 mismatch")
	errEncrypted = errors.New("encrypted")
	errAES       = errors.New("encrypted (WinZip AES)")
	errDirData   = errors.New("damaged: a directory entry with data")
	// unzip and Python's zipfile take an entry whose name has no trailing slash for a file,
	// whatever its mode; bsdtar and 7-Zip take its mode's word: a file to some, a folder to
	// others.
	errDirByMode = errors.New("damaged: a directory by its mode, not by its name (no trailing slash): unzip and Python's zipfile extract it as a file")
	errDamaged   = errors.New("damaged: not a valid zip entry, or more data than its header declares")
	errCut       = errors.New("damaged: data cut short")
)

// ErrSHA256 is the damage of an entry whose data do not have the SHA-256 the manifest
// records (for a symlink, that of its recorded target).
var ErrSHA256 = errors.New("sha256 mismatch")

// methodAES is WinZip's AES encryption: the real method is inside its extra field.
const methodAES = 99

// methodNames names the methods other tools write that this reader does not read.
var methodNames = map[uint16]string{1: "Shrink", 6: "Implode", 9: "Deflate64", 12: "bzip2", 14: "LZMA",
	95: "xz", 98: "PPMd"}

// copyBufSize is the buffer each entry is streamed through: memory stays this, whatever the
// size of the entry.
const copyBufSize = 128 << 10

// checkHeaders says why the entry f, whose local header is at loc, cannot be read, from its
// headers alone: encrypted, a method this reader lacks, a directory with data, or a local
// header that disagrees with the central directory. Verify and restore both ask it before
// reading any data.
func checkHeaders(f *zip.File, loc localRef) error {
	_, err := dataAt(f, loc)
	return err
}

// dataAt is checkHeaders, and says where the entry's data starts and where it ends.
func dataAt(f *zip.File, loc localRef) (localSpan, error) {
	if err := checkMethod(f); err != nil {
		return localSpan{}, err
	}
	return checkLocal(f, loc)
}

// checkMethod is the part of checkHeaders that the central record f alone decides.
func checkMethod(f *zip.File) error {
	isDir := strings.HasSuffix(f.Name, "/")
	switch {
	case f.Method == methodAES:
		return errAES
	case f.Flags&0x1 != 0:
		return errEncrypted
	case isDir && f.UncompressedSize64 != 0:
		return errDirData
	case !isDir && f.Mode().IsDir():
		return errDirByMode
	case f.Method != zip.Store && f.Method != zip.Deflate && f.Method != MethodZstd:
		// A folder too: it holds no data, but unzip -t skips one of a method it lacks
		// as it skips such a file, and exits 81.
		return unsupportedMethod(f.Method)
	case f.Method != MethodZstd && f.ReaderVersion&0xff > unzipVersion:
		// Zstandard needs 6.3, and unzip 6.0 cannot read it whatever the field says.
		v := f.ReaderVersion & 0xff
		return fmt.Errorf("damaged: needs version %d.%d of the zip format to extract, which unzip 6.0 (up to 4.6) skips", v/10, v%10)
	}
	return nil
}

// unzipVersion is the last version of the zip format Info-ZIP unzip 6.0 extracts: it skips
// an entry that says it needs a later one (need PK compat. v5.2), and exits 81.
const unzipVersion = 46

// emptyDeflateMax bounds the compressed size of a directory's empty deflate stream: jar's
// is 2 bytes, an empty stored block 5.
const emptyDeflateMax = 8

// openEntry opens the data of f, whose local header is at loc, for reading: its data is
// found through its local header, which must agree with f (see checkHeaders), and read by
// offset, so that f need not come from Go's reader (see walkCentral). Reading it to the end
// fails unless the data match the CRC-32 and the size in the header: Go's reader skips the
// CRC check when the header says 0, which a hostile archive can use.
func openEntry(f *zip.File, loc localRef) (io.ReadCloser, error) {
	rc, _, err := openEntrySpan(f, loc)
	return rc, err
}

// openEntrySpan is openEntry, and says where the entry's data starts and where it ends.
func openEntrySpan(f *zip.File, loc localRef) (io.ReadCloser, localSpan, error) {
	span, err := dataAt(f, loc)
	if err != nil {
		return nil, span, err
	}
	rc, err := openData(f, loc, span)
	return rc, span, err
}

// openData opens the data of f, which start at span.data in loc's file, once dataAt has
// found them there.
func openData(f *zip.File, loc localRef, span localSpan) (io.ReadCloser, error) {
	// A directory holds no data. jar writes each as an empty deflate stream (2 bytes), which
	// inflates to nothing (the CRC reader holds it to that): a few bytes are let through.
	if strings.HasSuffix(f.Name, "/") && f.CompressedSize64 != 0 &&
		!(f.Method == zip.Deflate && f.UncompressedSize64 == 0 && f.CompressedSize64 <= emptyDeflateMax) {
		return nil, errDamaged
	}
	raw := io.NewSectionReader(loc.ra, span.data, int64(f.CompressedSize64))
	var rc io.ReadCloser
	switch f.Method {
	case zip.Deflate:
		rc = newFlateReader(raw)
	case MethodZstd:
		rc = zstdReader(raw)
	default:
		rc = io.NopCloser(raw)
	}
	return &crcReader{rc: rc, f: f, crc: crc32.NewIEEE()}, nil
}

func unsupportedMethod(method uint16) error {
	if name, ok := methodNames[method]; ok {
		return fmt.Errorf("unsupported compression method %d (%s)", method, name)
	}
	return fmt.Errorf("unsupported compression method %d", method)
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
	if r.n > r.f.UncompressedSize64 {
		return n, errDamaged
	}
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
		return unsupportedMethod(f.Method)
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

// copyCheckedAt streams the data of the entry f, whose local header is at loc, into w,
// checking its CRC-32, its size and, when want is not "", its SHA-256 (hex). A nil error
// means every byte written to w is right. An error of w comes back as a *writeError; any
// other error is a problem with the entry.
func copyCheckedAt(w io.Writer, f *zip.File, loc localRef, want string, buf []byte) (Checked, error) {
	got, _, err := copyCheckedSpan(w, f, loc, want, buf)
	return got, err
}

// copyCheckedSpan is copyCheckedAt, and says where the entry ends (see localSpan), which
// verify's coverage check needs (coverage.go).
func copyCheckedSpan(w io.Writer, f *zip.File, loc localRef, want string, buf []byte) (Checked, localSpan, error) {
	rc, span, err := openEntrySpan(f, loc)
	if err != nil {
		return Checked{}, span, err
	}
	defer rc.Close()
	sum := sha256.New()
	ww := &errWriter{w: w}
	n, err := io.CopyBuffer(io.MultiWriter(ww, sum), onlyReader{rc}, buf)
	if ww.err != nil {
		return Checked{}, span, &writeError{ww.err}
	}
	if err != nil {
		return Checked{}, span, err
	}
	got := Checked{Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}
	if want != "" && got.SHA256 != want {
		return got, span, ErrSHA256
	}
	return got, span, nil
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
