package s3store

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
)

// blockOf is block i of a test object: its bytes say which block they are.
func blockOf(i int64, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), n/8)
}

// TestSpoolKeepsBlocks: a block spooled is read back as it was written, the last (short)
// one too; a block past the spool's room is not spooled, and no block is given that was
// not; nothing of the spool has a name in its folder.
func TestSpoolKeepsBlocks(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(dir, 20*blockSize, 0)
	if s == nil {
		t.Fatal("no spool for an object of 20 blocks")
	}
	defer s.close()
	s.max = 4*blockSize + 1000 // room for blocks 0 to 3, and the short block 5, not block 4
	for i := range int64(6) {
		n := blockSize
		if i == 5 {
			n = 1000
		}
		s.put(i, blockOf(i, n))
		s.put(i, blockOf(99, n)) // spooled already: kept as it was
	}
	for i := range int64(6) {
		got := s.get(i)
		want := blockOf(i, blockSize)
		switch i {
		case 4:
			want = nil
		case 5:
			want = blockOf(5, 1000)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("block %d: read back %d bytes beginning %q, want %d", i, len(got), got[:min(8, len(got))], len(want))
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("the spool's folder holds %v", names)
	}
}

// TestSpoolNoneForSmallObjects: an object the blocks kept in memory hold whole, or no folder,
// gets no spool; a spool takes no block into the room it must leave free; a nil spool gives
// nothing and takes nothing.
func TestSpoolNoneForSmallObjects(t *testing.T) {
	if s := newSpool(t.TempDir(), blocksKept*blockSize, 0); s != nil {
		t.Error("a spool for an object of blocksKept blocks")
	}
	if s := newSpool("", 100*blockSize, 0); s != nil {
		t.Error("a spool with no folder")
	}
	if s := newSpool(t.TempDir()+"/missing", 100*blockSize, 0); s != nil {
		t.Error("a spool in a folder that does not exist")
	}
	full := newSpool(t.TempDir(), 100*blockSize, math.MaxInt64) // more room than any disk has, and no wrap
	defer full.close()
	full.put(0, blockOf(0, blockSize))
	if full.get(0) != nil {
		t.Error("a spool took a block into the room it must leave free")
	}
	var s *spool
	s.put(0, []byte("x"))
	if s.get(0) != nil {
		t.Error("a nil spool gave a block")
	}
	s.close()
}

// TestSpoolDroppedOnFailure: a spool whose file fails a read (an I/O error) or gives a
// block back changed is dropped, and gives no block from then on, rather than wrong bytes; one that fails a write (a full
// disk) takes no more blocks and still gives those it holds.
func TestSpoolDroppedOnFailure(t *testing.T) {
	s := newSpool(t.TempDir(), 20*blockSize, 0)
	s.put(0, blockOf(0, blockSize))
	s.f.Close() // every read and write fails from here on
	if got := s.get(0); got != nil {
		t.Errorf("a failed read gave %d bytes", len(got))
	}
	s.put(1, blockOf(1, blockSize))
	if s.get(1) != nil {
		t.Error("a block put after the spool was dropped was given back")
	}

	s = newSpool(t.TempDir(), 20*blockSize, 0)
	s.put(0, blockOf(0, blockSize))
	s.put(1, blockOf(1, blockSize))
	if _, err := s.f.WriteAt([]byte("changed on the disk"), 100); err != nil {
		t.Fatal(err)
	}
	if got := s.get(0); got != nil {
		t.Errorf("a block changed on the disk was given back (%d bytes)", len(got))
	}
	if s.get(1) != nil {
		t.Error("a spool that gave a changed block back was kept")
	}

	s = newSpool(t.TempDir(), 20*blockSize, 0)
	defer s.close()
	s.put(0, blockOf(0, blockSize))
	// The same file, open for reading only: writes fail, reads do not.
	ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", s.f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	s.f = ro
	s.put(1, blockOf(1, blockSize))
	s.put(2, blockOf(2, blockSize))
	if got := s.get(0); !bytes.Equal(got, blockOf(0, blockSize)) {
		t.Errorf("after a failed write, block 0 read back as %d bytes", len(got))
	}
	if s.get(1) != nil || s.get(2) != nil || !s.full {
		t.Error("a spool whose write failed took more blocks")
	}
}

// TestSpoolConcurrent: workers putting and getting blocks at once, with slots reused, each
// get either nothing or the block asked for (go test -race checks the rest).
func TestSpoolConcurrent(t *testing.T) {
	s := newSpool(t.TempDir(), 64*blockSize, 0)
	defer s.close()
	s.max = 3 * blockSize
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := range 200 {
				i := int64((k*7 + w) % 9)
				if got := s.get(i); got != nil && !bytes.Equal(got, blockOf(i, blockSize)) {
					t.Errorf("block %d: read back another block's bytes", i)
					return
				}
				s.put(i, blockOf(i, blockSize))
			}
		})
	}
	wg.Wait()
}

// TestSpoolShortBlockFirst: the short last block, spooled first (Spool takes in the blocks
// kept in memory, which hold the end of the archive), leaves room for every other block.
func TestSpoolShortBlockFirst(t *testing.T) {
	const n = 12
	s := newSpool(t.TempDir(), n*blockSize+1000, 0)
	defer s.close()
	s.put(n, blockOf(n, 1000))
	for i := range int64(n) {
		s.put(i, blockOf(i, blockSize))
	}
	for i := range int64(n) {
		if !bytes.Equal(s.get(i), blockOf(i, blockSize)) {
			t.Errorf("block %d of %d not spooled", i, n)
		}
	}
	if !bytes.Equal(s.get(n), blockOf(n, 1000)) {
		t.Error("the short last block not spooled")
	}
}

// TestSpoolAfterClose: an object closed makes no spool, whose file nothing would close.
func TestSpoolAfterClose(t *testing.T) {
	o := &Object{s: &Store{spoolDir: t.TempDir()}, size: 20 * blockSize}
	o.Close()
	o.Spool(0)
	if o.spool != nil {
		o.spool.close()
		t.Error("Spool after Close made a spool")
	}
}
