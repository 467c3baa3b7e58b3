package s3store

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
)

// blockOf is block i of a test object: its bytes say which block they are.
func blockOf(i int64, n int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), n/8)
}

// TestSpoolKeepsBlocks: a block spooled is read back as it was written, the last one short;
// past the spool's room the oldest block's slot is reused and that block is no longer given,
// never another block's bytes; nothing of the spool has a name in its folder.
func TestSpoolKeepsBlocks(t *testing.T) {
	dir := t.TempDir()
	s := newSpool(dir, 20*blockSize)
	if s == nil {
		t.Fatal("no spool for an object of 20 blocks")
	}
	defer s.close()
	s.max = 4 * blockSize
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
		switch {
		case i < 2 && got != nil:
			t.Errorf("block %d: given back after its slot was reused", i)
		case i >= 2 && !bytes.Equal(got, blockOf(i, len(got))):
			t.Errorf("block %d: read back %d bytes beginning %q", i, len(got), got[:min(8, len(got))])
		case i == 5 && len(got) != 1000, i >= 2 && i < 5 && len(got) != blockSize:
			t.Errorf("block %d: read back %d bytes", i, len(got))
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("the spool's folder holds %v", names)
	}
}

// TestSpoolNoneForSmallObjects: an object the blocks kept in memory hold whole, or no folder,
// gets no spool; a nil spool gives nothing and takes nothing.
func TestSpoolNoneForSmallObjects(t *testing.T) {
	if s := newSpool(t.TempDir(), blocksKept*blockSize); s != nil {
		t.Error("a spool for an object of blocksKept blocks")
	}
	if s := newSpool("", 100*blockSize); s != nil {
		t.Error("a spool with no folder")
	}
	if s := newSpool(t.TempDir()+"/missing", 100*blockSize); s != nil {
		t.Error("a spool in a folder that does not exist")
	}
	var s *spool
	s.put(0, []byte("x"))
	if s.get(0) != nil {
		t.Error("a nil spool gave a block")
	}
	s.close()
}

// TestSpoolDroppedOnFailure: a spool whose file fails a write or a read (a full disk, an I/O
// error) is dropped, and gives no block from then on, rather than wrong bytes.
func TestSpoolDroppedOnFailure(t *testing.T) {
	s := newSpool(t.TempDir(), 20*blockSize)
	s.put(0, blockOf(0, blockSize))
	s.f.Close() // every read and write fails from here on
	if got := s.get(0); got != nil {
		t.Errorf("a failed read gave %d bytes", len(got))
	}
	s.put(1, blockOf(1, blockSize))
	if s.get(1) != nil {
		t.Error("a block put after the spool was dropped was given back")
	}

	s = newSpool(t.TempDir(), 20*blockSize)
	s.f.Close()
	s.put(2, blockOf(2, blockSize)) // the write fails
	if s.get(2) != nil || s.f != nil {
		t.Error("a spool whose write failed was kept")
	}
}

// TestSpoolConcurrent: workers putting and getting blocks at once, with slots reused, each
// get either nothing or the block asked for (go test -race checks the rest).
func TestSpoolConcurrent(t *testing.T) {
	s := newSpool(t.TempDir(), 64*blockSize)
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
