package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"backup/format"
)

// filesPool is a files' pool of jobs workers, stopped when the test ends.
func filesPool(t *testing.T, jobs int) *chunkPool {
	t.Helper()
	comp, err := newCompressor(format.Deflate, 1, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p := newChunkPool(comp, jobs)
	t.Cleanup(p.close)
	return p
}

// manifestLike is n bytes of JSON-like text with random digests, as a manifest holds.
func manifestLike(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"path":"src/pkg%d/file%d.go","size":%d,"sha256":"%016x%016x%016x%016x"},`+"\n",
			i/40, i, rng.IntN(1<<20), rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	}
	return b.Bytes()[:n]
}

// deflateChunked deflates data through a chunkWriter of jobs workers, in writes of uneven
// sizes.
func deflateChunked(t *testing.T, data []byte, jobs int) []byte {
	t.Helper()
	var out bytes.Buffer
	c, err := newChunkWriter(&out, filesPool(t, jobs))
	if err != nil {
		t.Fatal(err)
	}
	for rest, i := data, 0; len(rest) > 0; i++ {
		n := min(len(rest), []int{7, 4093, chunkSize + 3, 1, 65536}[i%5])
		if k, err := c.Write(rest[:n]); k != n || err != nil {
			t.Fatalf("write: %d of %d bytes, %v", k, n, err)
		}
		rest = rest[n:]
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// The manifest, deflated in chunks on several workers, inflates to what was written with
// Go's own inflater, and its bytes are the same whatever the number of workers: an archive
// is the same whatever --jobs is. Sizes around the chunk boundaries, and none.
func TestChunkWriterStream(t *testing.T) {
	for _, n := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 12345} {
		data := manifestLike(n)
		one := deflateChunked(t, data, 1)
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(one)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: inflated %d bytes (%v), not what was written", n, len(got), err)
		}
		for _, jobs := range []int{2, 5} {
			if !bytes.Equal(deflateChunked(t, data, jobs), one) {
				t.Errorf("%d bytes: %d workers deflated other bytes than one", n, jobs)
			}
		}
	}
}

// A manifest of several chunks, written by the zipWriter, reads back whole through Go's zip
// reader, which checks its CRC-32 and sizes.
func TestChunkWriterManifestEntry(t *testing.T) {
	data := manifestLike(2*chunkSize + 777)
	var arch bytes.Buffer
	z := newZipWriter(&arch, t.TempDir(), filesPool(t, 2))
	fh := &zip.FileHeader{Name: ".backup-manifest.json", Method: zip.Deflate, Modified: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)}
	w, err := z.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(arch.Bytes()), int64(arch.Len()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), not the %d written", len(got), err, len(data))
	}
}

type failAfter struct{ n int }

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// A write of the archive that fails is the manifest's error, and neither it nor abort leaves
// the pool's workers behind.
func TestChunkWriterStops(t *testing.T) {
	files := filesPool(t, 2)
	before := runtime.NumGoroutine()
	data := manifestLike(12 * chunkSize)
	c, err := newChunkWriter(&failAfter{n: 100_000}, files)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := c.Write(data)
	if err := c.Close(); !errors.Is(werr, errFull) && !errors.Is(err, errFull) {
		t.Errorf("write %v, close %v; want %v", werr, err, errFull)
	}
	var out bytes.Buffer
	c, err = newChunkWriter(&out, files)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(data[:2*chunkSize+5])
	c.abort()
	if out.Len() != 0 {
		t.Errorf("abort wrote %d bytes", out.Len())
	}
	waitGoroutines(t, before)
}
