package archive

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// TestPassHashReusesBuffers: chunks given from two buffers that are overwritten as soon as
// hashed says so hash to the SHA-256 of the stream, as seqReader uses them; a buffer
// overwritten too early would change the sum.
func TestPassHashReusesBuffers(t *testing.T) {
	data := make([]byte, 5<<20+777)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	var bufs [2][]byte
	var last [2]int
	for i := range bufs {
		bufs[i] = make([]byte, 100_003)
	}
	p := newPassHash()
	for i, rest := 0, data; len(rest) > 0; i++ {
		b := i % 2
		p.hashed(last[b])
		n := copy(bufs[b], rest)
		rest = rest[n:]
		last[b] = p.add(bufs[b][:n])
	}
	got := p.sum()
	want := sha256.Sum256(data)
	if !bytes.Equal(got, want[:]) {
		t.Fatalf("sum %x, want %x", got, want)
	}
	p.stop() // a second stop does nothing
}
