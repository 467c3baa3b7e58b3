package archive

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
)

// FuzzFlateReaderForgets: a pooled deflate reader decodes any stream, damaged ones too,
// exactly as one that never decoded anything: what it read before leaves no trace. (An
// empty Huffman tree keeps the previous stream's table in klauspost's decoder, so a damaged
// stream was read through another entry's code: CI found verify --jobs naming another
// byte of the damage than verify one by one.)
func FuzzFlateReaderForgets(f *testing.F) {
	f.Add(deflated(f, []byte("alpha alpha alpha beta")))
	f.Add(deflated(f, textData(3000)))
	f.Add(emptyDistanceTree())
	dirty := deflated(f, textData(8<<10))
	f.Fuzz(func(t *testing.T, data []byte) {
		fresh := newFlateState()
		used := newFlateState()
		if _, err := decodeWith(used, dirty); err != nil {
			t.Fatal(err)
		}
		wantOut, wantErr := decodeWith(fresh, data)
		gotOut, gotErr := decodeWith(used, data)
		if !bytes.Equal(gotOut, wantOut) || errString(gotErr) != errString(wantErr) {
			t.Errorf("after another stream: %d bytes, %v\nfresh: %d bytes, %v", len(gotOut), gotErr, len(wantOut), wantErr)
		}
	})
}

func decodeWith(st *flateState, data []byte) ([]byte, error) {
	p := st.open(bytes.NewReader(data))
	out, err := io.ReadAll(io.LimitReader(p, 1<<20))
	p.Close()
	return out, err
}

func deflated(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, 6)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var corrupt flate.CorruptInputError
	if errors.As(err, &corrupt) {
		return corrupt.Error()
	}
	return err.Error()
}

// emptyDistanceTree is a dynamic block whose distance code is empty (legal when no match
// follows) and which then uses a match: the literal 'a', a length of 3, and the end of the
// block. Its distance has no code, so the stream is damaged.
func emptyDistanceTree() []byte {
	var w bitWriter
	w.bits(1, 1)  // the final block
	w.bits(2, 2)  // dynamic Huffman codes
	w.bits(1, 5)  // 258 literal/length codes
	w.bits(0, 5)  // 1 distance code
	w.bits(14, 4) // 18 code length codes, in the order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1
	for _, n := range []uint32{0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2} {
		w.bits(n, 3)
	}
	// The code lengths' code: 0 is 00, 1 is 01, 2 is 10, 18 (a run of zeros) is 11.
	zeros := func(n uint32) { w.code(3, 2); w.bits(n-11, 7) }
	zeros(97)    // 0..96
	w.code(1, 2) // 'a' has length 1
	zeros(138)   // 98..235
	zeros(20)    // 236..255
	w.code(2, 2) // 256 (end of block) has length 2
	w.code(2, 2) // 257 (a length of 3) has length 2
	w.code(0, 2) // the one distance code has length 0: the distance tree is empty
	w.code(0, 1) // 'a'
	w.code(3, 2) // a length of 3: its distance cannot be read
	w.code(2, 2) // end of block
	return w.done()
}

// bitWriter packs a deflate stream: values least significant bit first, Huffman codes most
// significant bit first.
type bitWriter struct {
	out  []byte
	acc  uint32
	nacc uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	for i := range n {
		w.acc |= (v >> i & 1) << w.nacc
		if w.nacc++; w.nacc == 8 {
			w.out, w.acc, w.nacc = append(w.out, byte(w.acc)), 0, 0
		}
	}
}

func (w *bitWriter) code(c uint32, n uint) {
	for i := n; i > 0; i-- {
		w.bits(c>>(i-1)&1, 1)
	}
}

func (w *bitWriter) done() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}
