package seal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"

	"backup/format"
)

// Header is what an age file's header says without a key: how many recipients it names.
type Header struct {
	Recipients int
}

// ReadHeader parses the age header of the file ra reads (size bytes), without a key.
func ReadHeader(ra io.ReaderAt, size int64) (Header, error) {
	hdr, err := age.ExtractHeader(io.NewSectionReader(ra, 0, size))
	if err != nil {
		return Header{}, fmt.Errorf("not an age file, or its header is damaged: %w", err)
	}
	// Each recipient's stanza starts a line with "-> ".
	return Header{Recipients: bytes.Count(hdr, []byte("\n-> "))}, nil
}

// CheckCiphertext checks what can be checked of an encrypted archive without a key: its
// age header parses, and, when want is set (its receipt's record), its size and SHA-256
// are want's. It reads the whole file for the hash; ctx stops it.
func CheckCiphertext(ctx context.Context, ra io.ReaderAt, size int64, want *format.Summary) (Header, error) {
	h, err := ReadHeader(ra, size)
	if err != nil || want == nil {
		return h, err
	}
	got, err := Sum(ctx, ra, size)
	if err != nil {
		return h, err
	}
	return h, want.Match(got)
}

// sumBufSize is the size of the sequential reads that hash a file.
const sumBufSize = 1 << 20

// Sum hashes the size bytes ra reads.
func Sum(ctx context.Context, ra io.ReaderAt, size int64) (format.Summary, error) {
	h := sha256.New()
	buf := make([]byte, sumBufSize)
	var at int64
	for at < size {
		if err := ctx.Err(); err != nil {
			return format.Summary{}, err
		}
		n, err := ra.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		h.Write(buf[:n])
		at += int64(n)
		switch {
		case err != nil && errors.Is(err, io.EOF):
			if n == 0 {
				// Shorter than its size said: the size then says it was cut short.
				return format.Summary{Size: at, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
			}
		case err != nil:
			// A read that failed is its own error, never taken for the end of the file
			// (which Match would call damage).
			return format.Summary{}, err
		}
	}
	return format.Summary{Size: at, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
