package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWriteBackStartsWriting: of 32 MiB written through a WriteBack, the pages the kernel
// still holds dirty are at most the last 8 MiB and whatever the last request did not reach;
// written with plain writes, all of them stay dirty until the fsync (nothing else asks for
// them within seconds). The folder is the package's own, on a disk, since tmpfs has no
// write-back; cachestat(2) counts the dirty pages.
func TestWriteBackStartsWriting(t *testing.T) {
	const size = 32 << 20
	data := bytes.Repeat([]byte("write back "), size/11+1)[:size]
	dirty := func(write func(f *os.File)) int64 {
		f, err := os.CreateTemp(".", "writeback-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		write(f)
		return dirtyBytes(t, f)
	}
	plain := dirty(func(f *os.File) { mustWrite(t, f, data) })
	if plain < size/2 {
		t.Skipf("only %d of %d bytes written stay dirty here: nothing to measure", plain, size)
	}
	early := dirty(func(f *os.File) {
		w := NewWriteBack(f)
		for b := data; len(b) > 0; b = b[1<<20:] {
			mustWrite(t, w, b[:1<<20])
		}
		for deadline := time.Now().Add(5 * time.Second); w.asking.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		// A disk busy with other work may still be taking the requests in: give it the
		// seconds plain writes are never given (they stay dirty until the fsync).
		for deadline := time.Now().Add(5 * time.Second); dirtyBytes(t, f) > size/2 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	if early > size/2 {
		t.Errorf("%d of %d bytes still dirty after writing through a WriteBack (plain writes: %d)", early, size, plain)
	}
}

// dirtyBytes is how much of f the kernel holds dirty, by cachestat(2).
func dirtyBytes(t *testing.T, f *os.File) int64 {
	t.Helper()
	var st unix.Cachestat_t
	err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &st, 0)
	if errors.Is(err, unix.ENOSYS) {
		t.Skip("cachestat(2) needs Linux 6.5")
	}
	if err != nil {
		t.Fatal(err)
	}
	return int64(st.Dirty) * int64(os.Getpagesize())
}

func mustWrite(t *testing.T, w interface{ Write([]byte) (int, error) }, b []byte) {
	t.Helper()
	if n, err := w.Write(b); err != nil || n != len(b) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(b), err)
	}
}
