package seal

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"
)

// sealed encrypts data to rcpts and returns the age file's bytes.
func sealed(t *testing.T, data []byte, rcpts ...age.Recipient) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, rcpts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func identities(ids ...age.Identity) *Identities { return &Identities{list: ids} }

// headerLen is where an age file's payload starts (after the header and the nonce).
func headerLen(t *testing.T, file []byte) int {
	t.Helper()
	hdr, err := age.ExtractHeader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	return len(hdr) + 16
}

func TestUnsealRandomAccess(t *testing.T) {
	k := newTestKeys(t)
	data := make([]byte, 5*chunkSize+1234)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	file := sealed(t, data, k.x25519.Recipient())
	ra, size, err := identities(k.hybrid, k.x25519).Unseal(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(data)) {
		t.Fatalf("plaintext size %d, want %d", size, len(data))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 600 {
		off := rng.Int64N(size)
		n := rng.IntN(3 * chunkSize)
		if i%6 == 0 { // whole chunks, from a chunk's start
			off = rng.Int64N(6) * chunkSize
			n = (1 + rng.IntN(6)) * chunkSize
		}
		buf := make([]byte, n)
		got, err := ra.ReadAt(buf, off)
		want := min(int64(n), size-off)
		if int64(got) != want || !bytes.Equal(buf[:got], data[off:off+int64(got)]) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; bytes differ or short", n, off, got, err)
		}
		if int64(n) > size-off && err != io.EOF {
			t.Fatalf("a read past the end gave %v, want io.EOF", err)
		}
	}
	plainFile := []byte("PK\x03\x04 not encrypted")
	if ra, n, err := (*Identities)(nil).Unseal(bytes.NewReader(plainFile), int64(len(plainFile))); err != nil || n != int64(len(plainFile)) || ra == nil {
		t.Errorf("a plain file: %v, %d, %v; want it as it is", ra, n, err)
	}
}

func TestUnsealRefusals(t *testing.T) {
	k := newTestKeys(t)
	other, _ := age.GenerateX25519Identity()
	data := bytes.Repeat([]byte("zip bytes "), 3*chunkSize/10)
	file := sealed(t, data, k.x25519.Recipient(), other.Recipient())
	open := func(ids *Identities, f []byte) error {
		_, _, err := ids.Unseal(bytes.NewReader(f), int64(len(f)))
		return err
	}
	if err := open(nil, file); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("no identity: %v", err)
	}
	stranger, _ := age.GenerateX25519Identity()
	var nm *NoMatchError
	if err := open(identities(stranger), file); !errors.As(err, &nm) || nm.Recipients != 2 || err.Error() != "no identity matches: the archive is for 2 recipients" {
		t.Errorf("a wrong identity: %v", err)
	}
	if err := open(identities(k.x25519), file[:len(file)-1]); err == nil {
		t.Error("a file cut short opened")
	}
	// A header taken from another file to the same recipient: its file key opens the
	// header, and no chunk of this payload.
	swapped := sealed(t, []byte("other"), k.x25519.Recipient())
	h := headerLen(t, swapped)
	mixed := append(append([]byte{}, swapped[:h]...), file[headerLen(t, file):]...)
	if err := open(identities(k.x25519), mixed); err == nil {
		t.Error("a swapped header opened")
	}
}

// A flipped byte in a chunk fails every read that reaches that chunk, and only those.
func TestUnsealFlippedChunk(t *testing.T) {
	k := newTestKeys(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4*chunkSize/16)
	file := sealed(t, data, k.x25519.Recipient())
	const damaged = 2
	file[headerLen(t, file)+damaged*(chunkSize+16)+100] ^= 1
	ra, _, err := identities(k.x25519).Unseal(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		for _, r := range []struct{ off, n int }{{i*chunkSize + 5, 10}, {i * chunkSize, chunkSize}} {
			buf := make([]byte, r.n)
			_, err := ra.ReadAt(buf, int64(r.off))
			if (err != nil) != (i == damaged) {
				t.Errorf("chunk %d, %d bytes at %d: %v", i, r.n, r.off, err)
			}
			if i == damaged && err != nil && !strings.Contains(err.Error(), "authenticate") {
				t.Errorf("chunk %d: %v, want it called damaged", i, err)
			}
		}
	}
	buf := make([]byte, 4*chunkSize)
	if n, err := ra.ReadAt(buf, 0); n != damaged*chunkSize || err == nil {
		t.Errorf("reading every chunk: %d bytes, %v; want the %d before the damaged one and an error", n, err, damaged*chunkSize)
	}
}

func TestCheckCiphertext(t *testing.T) {
	k := newTestKeys(t)
	other, _ := age.GenerateX25519Identity()
	file := sealed(t, []byte("data"), k.x25519.Recipient(), other.Recipient())
	ra := bytes.NewReader(file)
	sum, err := Sum(t.Context(), ra, int64(len(file)))
	if err != nil || sum.Size != int64(len(file)) {
		t.Fatalf("Sum: %+v, %v", sum, err)
	}
	h, err := CheckCiphertext(t.Context(), ra, int64(len(file)), &sum)
	if err != nil || h.Recipients != 2 {
		t.Errorf("CheckCiphertext: %+v, %v; want 2 recipients, no error", h, err)
	}
	wrong := sum
	wrong.SHA256 = strings.Repeat("0", 64)
	if _, err := CheckCiphertext(t.Context(), ra, int64(len(file)), &wrong); err == nil {
		t.Error("a ciphertext of another SHA-256 passed")
	}
	zip := []byte("PK\x03\x04 a zip")
	if _, err := CheckCiphertext(t.Context(), bytes.NewReader(zip), int64(len(zip)), nil); err == nil {
		t.Error("a zip passed as an age file")
	}
}

// Reading a file front to back asks age for several chunks at a time, into buffers reused
// once no kept chunk is in them: after the first pass, a pass allocates only what age does
// for each call (a chunk's buffer), under a quarter of a chunk a chunk read, where a call a
// chunk without reuse allocates two chunks.
func TestUnsealReadsAhead(t *testing.T) {
	k := newTestKeys(t)
	const chunks = 5 * keptChunks / 4 // more than are kept, so every pass decrypts them all
	file := sealed(t, bytes.Repeat([]byte{7}, chunks*chunkSize), k.x25519.Recipient())
	ra, size, err := identities(k.x25519).Unseal(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<10)
	pass := func() {
		for off := int64(0); off < size; off += int64(len(buf)) {
			if _, err := ra.ReadAt(buf, off); err != nil && err != io.EOF {
				t.Fatal(err)
			}
		}
	}
	pass()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pass()
	runtime.ReadMemStats(&after)
	if perChunk := (after.TotalAlloc - before.TotalAlloc) / chunks; perChunk >= chunkSize/4 {
		t.Errorf("%d bytes allocated a chunk read, want less than %d", perChunk, chunkSize/4)
	}
}

// Readers at once, over more chunks than are kept, each get the bytes they asked for while
// others' reads drop chunks and reuse their buffers.
func TestUnsealConcurrentReaders(t *testing.T) {
	k := newTestKeys(t)
	data := make([]byte, 3*keptChunks*chunkSize+777)
	for i := range data {
		data[i] = byte(i*13/7 + i>>16)
	}
	file := sealed(t, data, k.x25519.Recipient())
	ra, size, err := identities(k.x25519).Unseal(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			buf := make([]byte, 3*chunkSize)
			for range 300 {
				off, n := rng.Int64N(size), 1+rng.IntN(len(buf))
				got, _ := ra.ReadAt(buf[:n], off)
				if want := min(int64(n), size-off); int64(got) != want || !bytes.Equal(buf[:got], data[off:off+int64(got)]) {
					t.Errorf("reader %d: %d bytes at %d: got %d, bytes differ or short", g, n, off, got)
					return
				}
			}
		})
	}
	wg.Wait()
}
