package archive

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"

	"backup/format"
)

// MethodZstd is the zip method number of Zstandard entries.
const MethodZstd uint16 = zstd.ZipMethodWinZip

// zstdReader decompresses the entries of --method zstd, from a pool of decoders.
var zstdReader = zstd.ZipDecompressor()

// RegisterDecompressors makes r read every method a Writer writes, with the same fast
// implementations: klauspost's deflate, which is several times faster than the standard
// library's, and Zstandard.
func RegisterDecompressors(r *zip.Reader) {
	r.RegisterDecompressor(zip.Deflate, newFlateReader)
	r.RegisterDecompressor(MethodZstd, zstdReader)
}

// compressor holds the settings of one Writer's compression. Safe for concurrent use; each
// goroutine compresses through an encoder of its own.
type compressor struct {
	method format.Method
	level  int           // 1 to 9; 0 means store
	zstd   *zstd.Encoder // for Zstd only: safe for concurrent use, keeps its own encoders
}

// encoder is one goroutine's deflate state, reused from file to file and chunk to chunk: it
// is large (about a MiB), and a backup compresses many small files.
type encoder struct {
	*compressor
	flate *flate.Writer // at the level; made on first use
	trial *flate.Writer // for the store decision
}

func (c *compressor) newEncoder() *encoder { return &encoder{compressor: c} }

func newCompressor(method format.Method, level, concurrency int) (*compressor, error) {
	if level < 0 || level > 9 {
		return nil, fmt.Errorf("compression level %d: must be 0 to 9", level)
	}
	c := &compressor{method: method, level: level}
	switch method {
	case "", format.Deflate:
		c.method = format.Deflate
	case format.Zstd:
		if level == 0 {
			break
		}
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstdLevel(level)),
			zstd.WithEncoderConcurrency(concurrency),
			// Each call compresses one chunk at most: a bigger window would only take memory.
			zstd.WithWindowSize(chunkSize),
			zstd.WithLowerEncoderMem(true),
			// The zip entry carries a CRC-32 already.
			zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
		c.zstd = enc
	default:
		return nil, fmt.Errorf("compression method %q: must be deflate or zstd", method)
	}
	return c, nil
}

// zstdLevel maps --level 1..9 onto three of the speeds of klauspost's zstd encoder: 1-3
// fastest (about zstd -1), 4-6 default (zstd -3), 7-9 better (zstd -7). Its best speed is
// left out: its tables take tens of MiB per encoder.
func zstdLevel(level int) zstd.EncoderLevel {
	switch {
	case level <= 3:
		return zstd.SpeedFastest
	case level <= 6:
		return zstd.SpeedDefault
	}
	return zstd.SpeedBetterCompression
}

// zipMethod is the zip method number of a compressed entry.
func (c *compressor) zipMethod() uint16 {
	if c.method == format.Zstd {
		return MethodZstd
	}
	return zip.Deflate
}

// stores says whether every file is stored: --level 0.
func (c *compressor) stores() bool { return c.level == 0 }

// compress appends the compressed form of data to dst. For deflate, dict primes the encoder
// (the preceding 32 KiB of the same stream, so that matches reach back across chunks as they
// would in one stream), and final ends the stream; otherwise the output ends in a sync flush,
// on a byte boundary, so that the next chunk's output can follow it directly. For zstd each
// call makes one whole frame, and a zstd stream may be a series of frames.
func (e *encoder) compress(dst *bytes.Buffer, data, dict []byte, final bool) error {
	if e.method == format.Zstd {
		dst.Grow(len(data)/2 + 64)
		buf := e.zstd.EncodeAll(data, dst.AvailableBuffer())
		_, err := dst.Write(buf)
		return err
	}
	if e.flate == nil {
		fw, err := flate.NewWriter(dst, e.level)
		if err != nil {
			return err
		}
		e.flate = fw
	}
	fw := e.flate
	// ResetDict with a nil dict is a plain Reset; always using it keeps no stale dict around.
	fw.ResetDict(dst, dict)
	if _, err := fw.Write(data); err != nil {
		return err
	}
	if final {
		return fw.Close()
	}
	return fw.Flush()
}

// compressChunk compresses one chunk of a large file, ending in a sync flush. Deflate at
// levels 1 to 6 gives up on data without repeats almost at once and writes it as stored
// blocks, as zstd does at every level: so a chunk of compressed data costs little more than
// copying it, and within a chunk what shrinks still shrinks. Levels 7 to 9 Huffman-code
// everything, slowly, so there a chunk whose start does not shrink is stored whole.
func (e *encoder) compressChunk(dst *bytes.Buffer, data, dict []byte) error {
	if e.method == format.Deflate && e.level >= 7 && !e.worthCompressing(data) {
		writeStoredBlocks(dst, data)
		return nil
	}
	return e.compress(dst, data, dict, false)
}

// maxStoredBlock is the most a stored deflate block holds (its LEN field has 16 bits).
const maxStoredBlock = 1<<16 - 1

// writeStoredBlocks writes data as non-final stored deflate blocks (RFC 1951 3.2.4). A chunk
// starts on a byte boundary, since the one before it ended in a sync flush (itself an empty
// stored block), and so does the next after these: each header is the 3 bits saying "stored,
// not final" padded to a byte, then LEN and its complement NLEN, little-endian.
func writeStoredBlocks(dst *bytes.Buffer, data []byte) {
	dst.Grow(len(data) + (len(data)/maxStoredBlock+1)*5)
	for len(data) > 0 {
		n := min(len(data), maxStoredBlock)
		dst.Write([]byte{0x00, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		dst.Write(data[:n])
		data = data[n:]
	}
}

// finalBlock is an empty, final deflate block with fixed Huffman codes (what zlib writes for
// Z_FINISH after a flush): it ends a stream whose chunks all ended in a sync flush.
var finalBlock = []byte{0x03, 0x00}

// end writes what closes a stream of chunks compressed with final unset.
func (c *compressor) end(w io.Writer) error {
	if c.method == format.Zstd {
		return nil
	}
	_, err := w.Write(finalBlock)
	return err
}

// Store decision. A trial deflates a sample at the run's level, which takes a fraction of a
// millisecond; data that does not shrink by at least 1/trialGain there is already compressed
// (media, archives, encrypted or random data) and is stored. The trial runs at the run's own
// level rather than the fastest because the levels differ in what they try: levels 1 to 6
// store a block in which they find no repeat, while 7 to 9 still Huffman-code it, which
// shrinks text without repeats (hex, base64) by a quarter or more.
const (
	trialSize = 64 << 10
	trialGain = 32
)

// worthCompressing runs the trial on the start of a file's data.
func (e *encoder) worthCompressing(data []byte) bool {
	sample := data[:min(len(data), trialSize)]
	if e.trial == nil {
		e.trial, _ = flate.NewWriter(io.Discard, e.level)
	}
	var n countWriter
	e.trial.Reset(&n)
	e.trial.Write(sample)
	e.trial.Close()
	return int64(n)*trialGain < int64(len(sample))*(trialGain-1)
}

type countWriter int64

func (n *countWriter) Write(p []byte) (int, error) {
	*n += countWriter(len(p))
	return len(p), nil
}

// compressedExts are extensions of formats that are compressed already. A file with one of
// them gets the trial even when it is small; a trial that shows otherwise (an uncompressed
// .tar.zst inside is rare, a stored .zip is not) still compresses it.
var compressedExts = map[string]bool{
	".7z": true, ".apk": true, ".avif": true, ".br": true, ".bz2": true, ".deb": true,
	".docx": true, ".epub": true, ".flac": true, ".gif": true, ".gz": true, ".heic": true,
	".jar": true, ".jpeg": true, ".jpg": true, ".lz": true, ".lz4": true, ".lzma": true,
	".m4a": true, ".m4v": true, ".mkv": true, ".mov": true, ".mp3": true, ".mp4": true,
	".odt": true, ".ogg": true, ".opus": true, ".png": true, ".pptx": true, ".rar": true,
	".rpm": true, ".tgz": true, ".txz": true, ".webm": true, ".webp": true, ".whl": true,
	".xlsx": true, ".xz": true, ".zip": true, ".zst": true,
}

func hasCompressedExt(name string) bool {
	return compressedExts[strings.ToLower(path.Ext(name))]
}
