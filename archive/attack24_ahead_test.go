package archive

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"backup/format"
)

// TestAttack24AheadReaderKeepsUnexpectedEOF shows that the reader ahead does not give "r's
// bytes in order, then r's first error" when that error is io.ErrUnexpectedEOF (what a
// decompressor or io.ReadFull says of a stream cut short): fill maps every
// io.ErrUnexpectedEOF that io.ReadFull returns to io.EOF, the source's own included, not
// only the one ReadFull makes of a short last block. parseEntryWith's errReader then sees a
// clean end, and a manifest entry cut short is parsed as if it were whole: before the read
// ahead, parseEntryWith returned io.ErrUnexpectedEOF. (The crcReader that every caller hands
// it today words the error as errCut first, so no command shows it yet; the reader's own
// contract, and parseEntryWith's "same errors", do not hold.)
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
