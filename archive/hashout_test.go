package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"testing"
)

// TestHashedOutOrder: writes of every size, around and across the buffers' edges, reach the
// writer whole and in order, and the count and both hashes are of those very bytes.
func TestHashedOutOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var want bytes.Buffer
	var got bytes.Buffer
	o := newHashedOut(&got, true)
	sizes := []int{0, 1, 30, writeBuffer - 31, writeBuffer, 1, 3*writeBuffer + 7, 4096, writeBuffer + 1}
	for _, n := range sizes {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		want.Write(p)
		if k, err := o.Write(p); k != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, k, err)
		}
		copy(p, make([]byte, n)) // the caller may reuse its buffer at once
	}
	if err := o.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("the writer got %d bytes, not the %d written in order", got.Len(), want.Len())
	}
	if o.n != int64(want.Len()) {
		t.Errorf("n = %d, want %d", o.n, want.Len())
	}
	if sum := sha256.Sum256(want.Bytes()); !bytes.Equal(o.h.Sum(nil), sum[:]) {
		t.Error("the SHA-256 is not that of the bytes written")
	}
	if k := maphash.Bytes(o.key.Seed(), want.Bytes()); o.key.Sum64() != k {
		t.Error("the keyed digest is not that of the bytes written")
	}
}

// failingAfter takes n bytes, then fails every write.
type failingAfter struct {
	n   int
	got bytes.Buffer
}

var errDiskFull = errors.New("disk full")

func (f *failingAfter) Write(p []byte) (int, error) {
	if f.got.Len()+len(p) > f.n {
		k := f.n - f.got.Len()
		f.got.Write(p[:k])
		return k, errDiskFull
	}
	return f.got.Write(p)
}

// TestHashedOutWriteFails: a write that fails on the goroutine is told by Flush, and by
// every Write after it, which then takes nothing; nothing is written after the failure.
func TestHashedOutWriteFails(t *testing.T) {
	f := &failingAfter{n: writeBuffer + 10}
	o := newHashedOut(f, false)
	if _, err := o.Write(make([]byte, 2*writeBuffer)); err != nil {
		t.Fatalf("the first Write failed before anything was written: %v", err)
	}
	if err := o.Flush(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Flush = %v, want the write's error", err)
	}
	if k, err := o.Write([]byte("more")); k != 0 || !errors.Is(err, errDiskFull) {
		t.Errorf("Write after the failure = %d, %v; want 0 and the write's error", k, err)
	}
	if f.got.Len() != f.n {
		t.Errorf("the writer got %d bytes; want the %d it took before failing", f.got.Len(), f.n)
	}
}

// shortWriter takes at most half of each write, without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestHashedOutShortWrite(t *testing.T) {
	o := newHashedOut(shortWriter{}, false)
	o.Write([]byte("abcd"))
	if err := o.Flush(); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("Flush = %v, want io.ErrShortWrite", err)
	}
}

// TestHashedOutRestore: taking back what followed a state, as a streamed entry that failed
// is taken back (the file cut where it began), leaves the hashes and the count as if it had
// never been written.
func TestHashedOutRestore(t *testing.T) {
	var file bytes.Buffer
	o := newHashedOut(&file, true)
	a, b, c := bytes.Repeat([]byte("a"), writeBuffer+5), bytes.Repeat([]byte("b"), 3*writeBuffer), []byte("c")
	o.Write(a)
	s, err := o.state()
	if err != nil {
		t.Fatal(err)
	}
	start := o.n
	o.Write(b)
	if err := o.Flush(); err != nil {
		t.Fatal(err)
	}
	file.Truncate(int(start))
	if err := o.restore(s, start); err != nil {
		t.Fatal(err)
	}
	o.Write(c)
	if err := o.Flush(); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, a...), c...)
	if !bytes.Equal(file.Bytes(), want) || o.n != int64(len(want)) {
		t.Fatalf("file %d bytes, n %d; want %d", file.Len(), o.n, len(want))
	}
	if sum := sha256.Sum256(want); !bytes.Equal(o.h.Sum(nil), sum[:]) {
		t.Error("the SHA-256 still holds the bytes taken back")
	}
	if o.key.Sum64() != maphash.Bytes(o.key.Seed(), want) {
		t.Error("the keyed digest still holds the bytes taken back")
	}
}
