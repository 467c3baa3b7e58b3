package seal

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// eioOnceAt reads file, but fails the first read that starts at off with EIO.
type eioOnceAt struct {
	file []byte
	off  int64
	hits atomic.Int32
}

func (r *eioOnceAt) ReadAt(p []byte, off int64) (int, error) {
	if off == r.off && r.hits.Add(1) == 1 {
		return 0, syscall.EIO
	}
	return bytes.NewReader(r.file).ReadAt(p, off)
}

// TestAttackReadAheadDropsEIO: plain.readChunk asks age for up to readAhead chunks at once
// and keeps those it got; a chunk after the first whose read fails is "not kept and fails
// only a read that needs it", but a read that needs it later asks again and succeeds, so
// an EIO met reading ahead is never reported to anyone: backup verify/list/restore
// --identity of an encrypted archive exit 0 without a word of it (strace -e
// inject=pread64:error=EIO:when=5..8, TestAttackSealedEIO).
func TestAttackReadAheadDropsEIO(t *testing.T) {
	k := newTestKeys(t)
	data := bytes.Repeat([]byte{7}, 6*chunkSize)
	file := sealed(t, data, k.x25519.Recipient())
	ra := &eioOnceAt{file: file, off: int64(headerLen(t, file)) + 2*(chunkSize+16)}
	pt, size, err := identities(k.x25519).Unseal(ra, int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	buf := make([]byte, 1<<10)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := pt.ReadAt(buf, off); err != nil && err != io.EOF && failed == nil {
			failed = err
		}
	}
	if ra.hits.Load() == 0 {
		t.Fatal("chunk 2 was not read")
	}
	if !errors.Is(failed, syscall.EIO) {
		t.Errorf("the read of chunk 2 failed with EIO (%d reads of it), and no read of the plaintext reported it (first error: %v)",
			ra.hits.Load(), failed)
	}
}

// TestUnsealReadFailureIsNoDamage: a read of the age header or of the last chunk that fails
// (EIO) is reported as the read's error, not as a damaged or cut file (attack pass 23: "cannot
// decrypt the archive (damaged, or cut short?): ... input/output error").
func TestUnsealReadFailureIsNoDamage(t *testing.T) {
	k := newTestKeys(t)
	file := sealed(t, bytes.Repeat([]byte{7}, 3*chunkSize), k.x25519.Recipient())
	last := int64(headerLen(t, file)) + 2*(chunkSize+16)
	_, _, err := identities(k.x25519).Unseal(&eioOnceAt{file: file, off: last}, int64(len(file)))
	if !errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), "damaged") {
		t.Errorf("Unseal with the last chunk's read failing: %v; want the EIO, not damage", err)
	}
	damaged := bytes.Clone(file)
	damaged[len(damaged)-1] ^= 1
	if _, _, err := identities(k.x25519).Unseal(bytes.NewReader(damaged), int64(len(damaged))); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Unseal of a damaged last chunk: %v; want it called damaged", err)
	}
}

// TestReadAheadFailureFailsItsRead (attack pass 25): a read whose read-ahead met a failed
// read of the file reports it, though the chunk it wanted was read: no later read may need
// the chunk the failure was in (verify --identity said ok when that chunk was the manifest's
// last, read again once the chunks kept had been dropped). Damage met reading ahead stays
// the error of the read that needs the damaged chunk.
func TestReadAheadFailureFailsItsRead(t *testing.T) {
	k := newTestKeys(t)
	file := sealed(t, bytes.Repeat([]byte{7}, 6*chunkSize), k.x25519.Recipient())
	chunk2 := int64(headerLen(t, file)) + 2*(chunkSize+16)
	pt, _, err := identities(k.x25519).Unseal(&eioOnceAt{file: file, off: chunk2}, int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pt.ReadAt(make([]byte, 1<<10), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("a read of chunk 0 whose read-ahead failed at chunk 2: %v; want the EIO", err)
	}

	damaged := bytes.Clone(file)
	damaged[chunk2+5] ^= 1
	pt, _, err = identities(k.x25519).Unseal(bytes.NewReader(damaged), int64(len(damaged)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pt.ReadAt(make([]byte, 1<<10), 0); err != nil {
		t.Errorf("a read of chunk 0 with chunk 2 damaged: %v; want it read", err)
	}
	if _, err := pt.ReadAt(make([]byte, 1<<10), 2*chunkSize); err == nil || !strings.Contains(err.Error(), "authenticate") {
		t.Errorf("a read of the damaged chunk 2: %v; want age's authentication error", err)
	}
}
