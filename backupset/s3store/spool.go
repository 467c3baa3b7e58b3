package s3store

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A restore checks the local header of every entry it selects before it writes anything,
// which reads nearly every block of an archive of small files, and then reads the blocks
// again for their data; verify hashes the whole archive while it checks entries in batches.
// With only blocksKept blocks in memory, each such block was fetched twice: a restore of a
// 38.6 MB archive of Go's source tree fetched 83.7 MB. A spool keeps every block fetched in
// an unnamed temp file on the local disk, so that a block read again is read from there.

// spoolMax is the most a spool holds; past it, the slot of the block spooled first is
// reused.
const spoolMax = 4 << 30

// spool holds the blocks of one object that its reads fetched. A spool that cannot be made,
// or fails a write or a read, is dropped: the reads fetch blocks as they would without it.
type spool struct {
	// mu makes each read and write of the file one step with the slot it uses: a slot
	// reused for another block must not be read as the one it held.
	mu    sync.Mutex
	f     *os.File
	slots map[int64]slot // by block index
	order []int64        // the blocks spooled, oldest first
	next  int64          // where a new slot begins
	max   int64
}

// slot is where a block lies in the spool, and its length (the last block is short).
type slot struct {
	off int64
	n   int
}

// newSpool returns a spool in dir for an object of size bytes, or nil: no dir, an object
// that the blocks kept in memory hold whole, or a file that could not be made. The file has
// no name (O_TMPFILE), so nothing is left behind by a killed run and no one can put a file
// of theirs at its name; a file system without unnamed files gets a temp file removed at
// once.
func newSpool(dir string, size int64) *spool {
	if dir == "" || size <= blocksKept*blockSize {
		return nil
	}
	f, err := openUnnamed(dir)
	if err != nil {
		return nil
	}
	return &spool{f: f, slots: map[int64]slot{}, max: min(size+blockSize, spoolMax)}
}

// openUnnamed makes a file in dir that only this process can reach.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(spool)"), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".backup-spool-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// get returns block i when the spool holds it.
func (s *spool) get(i int64) []byte {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.slots[i]
	if !ok || s.f == nil {
		return nil
	}
	data := make([]byte, sl.n)
	if _, err := s.f.ReadAt(data, sl.off); err != nil {
		s.drop()
		return nil
	}
	return data
}

// put spools data, block i, unless it is spooled already.
func (s *spool) put(i int64, data []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.slots[i]; ok || s.f == nil {
		return
	}
	off := s.next
	if off+blockSize <= s.max {
		s.next += blockSize
	} else {
		oldest := s.order[0]
		s.order = s.order[1:]
		off = s.slots[oldest].off
		delete(s.slots, oldest)
	}
	if _, err := s.f.WriteAt(data, off); err != nil { // a full disk, say
		s.drop()
		return
	}
	s.slots[i] = slot{off: off, n: len(data)}
	s.order = append(s.order, i)
}

// drop closes the file and forgets what it held; the spool is empty from then on.
func (s *spool) drop() {
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.slots, s.order = nil, map[int64]slot{}, nil
}

// close lets the file go.
func (s *spool) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop()
}
