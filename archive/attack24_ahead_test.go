package archive

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"backup/format"
)

// TestAttack24AheadReaderKeepsUnexpectedEOF (attack pass 24): the reader ahead gives its
// source's io.ErrUnexpectedEOF (a stream cut short) as it is. It mapped every
// io.ErrUnexpectedEOF from io.ReadFull to io.EOF, the source's own included, so a manifest
// entry cut short parsed as whole through parseEntryWith (no command showed it: crcReader
// words the error first).
func TestAttack24AheadReaderKeepsUnexpectedEOF(t *testing.T) {
	data := manifestLike(1000)
	src := func() io.Reader {
		return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(io.ErrUnexpectedEOF))
	}
	a := newAheadReader(src())
	got, err := io.ReadAll(a)
	a.stop()
	if !bytes.Equal(got, data) || err != io.ErrUnexpectedEOF {
		t.Errorf("read ahead: %d of %d bytes, then %v; want all, then %v", len(got), len(data), err, io.ErrUnexpectedEOF)
	}
	// parseEntryWith: a parse that reads to the end is told of the source's error.
	parse := func(r io.Reader) (*format.Manifest, error) {
		_, err := io.ReadAll(r)
		return &format.Manifest{}, err
	}
	if _, err := parseEntryWith(src(), parse); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("parseEntryWith: %v; want %v, the source's error", err, io.ErrUnexpectedEOF)
	}
}
