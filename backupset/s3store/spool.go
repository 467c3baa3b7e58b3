package s3store

import (
	"hash/crc32"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
	"backup/eintr"
)

// A restore checks the local header of every entry it selects before it writes anything,
// which reads nearly every block of an archive of small files, and then reads the blocks
// again for their data; verify hashes the whole archive while it checks entries in batches.
// With only blocksKept blocks in memory, each such block was fetched twice: a restore of a
// 38.6 MB archive of Go's source tree fetched 83.7 MB. A spool keeps every block fetched in
// an unnamed temp file on the local disk, so that a block read again is read from there.

// spoolMax is the most a spool holds; blocks past it are not spooled. Both reads of a
// restore go front to back, so a spool that reused the room of its oldest blocks would
// have them gone before the second read came to them, and would write the whole archive
// to the disk for nothing: the first 4 GiB are kept instead.
const spoolMax = 4 << 30

// spool holds the blocks of one object that its reads fetched, up to max bytes, and only
// while its file system keeps reserve bytes free besides. A spool that cannot be made, or
// that fails a read or gives a block back changed, is dropped; one that fails a write (a
// full disk) or comes to its reserve takes no more blocks. The reads fetch what it lacks
// as they would without it.
type spool struct {
	// mu guards the rest, and holds each read of f: none may outlive the Close of a drop,
	// after which its descriptor's number can name another file.
	mu      sync.Mutex
	f       *os.File
	slots   map[int64]slot // by block index
	next    int64          // where a new slot begins
	max     int64
	reserve int64
	full    bool // a write failed, or the reserve was reached: no more blocks are taken
}

// slot is where a block lies in the spool, its length (the last block is short), and its
// CRC-32C: a block the disk gives back changed is fetched again, not handed to a restore
// that would find its entries damaged.
type slot struct {
	off int64
	n   int
	sum uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newSpool returns a spool in dir for an object of size bytes, which keeps reserve bytes
// free on dir's file system besides, or nil: no dir, an object that the blocks kept in
// memory hold whole, or a file that could not be made. The file has no name (O_TMPFILE), so
// nothing is left behind by a killed run and no one can put a file of theirs at its name;
// a file system without unnamed files gets a temp file removed at once.
func newSpool(dir string, size, reserve int64) *spool {
	if dir == "" || size <= blocksKept*blockSize {
		return nil
	}
	f, err := atomicfile.CreateUnnamed(dir)
	if err != nil {
		return nil
	}
	return &spool{f: f, slots: map[int64]slot{}, max: min(size, spoolMax), reserve: reserve}
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
	if _, err := s.f.ReadAt(data, sl.off); err != nil || crc32.Checksum(data, castagnoli) != sl.sum {
		s.drop()
		return nil
	}
	return data
}

// put spools data, block i, unless it is spooled already or there is no room.
func (s *spool) put(i int64, data []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.slots[i]; ok || s.f == nil || s.full || s.next+int64(len(data)) > s.max {
		return
	}
	// Free space less the block, against the reserve: a reserve near the largest int64
	// added to the block would wrap.
	var fs unix.Statfs_t
	if err := eintr.Fstatfs(int(s.f.Fd()), &fs); err != nil || int64(fs.Bavail)*fs.Bsize-int64(len(data)) < s.reserve {
		s.full = true
		return
	}
	// A failed write (a full disk, say) leaves the slots written before it whole.
	if _, err := s.f.WriteAt(data, s.next); err != nil {
		s.full = true
		return
	}
	s.slots[i] = slot{off: s.next, n: len(data), sum: crc32.Checksum(data, castagnoli)}
	s.next += int64(len(data)) // the short last block, spooled early, takes no full slot
}

// drop closes the file and forgets what it held; the spool is empty from then on.
func (s *spool) drop() {
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.slots = nil, map[int64]slot{}
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
