package archive

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"io"

	"backup/format"
)

// A reference is read once, front to back, before the run copies anything from it (see
// refsum.go for why the whole file is hashed). The same pass takes, for each entry a run may
// copy, a keyed digest of its compressed bytes (keyedSum, with a seed made for this run and
// never written anywhere), and checks its local header and data descriptor against the
// central directory. The copy hashes the bytes it copies the same way: an entry changed
// after the pass cannot keep a digest whose key it does not know. So each byte of the
// reference costs one SHA-256 and two keyed digests at several GB/s, where a SHA-256 of the
// whole file, another of each entry before its turn and a third while copying it cost three
// SHA-256s, and the manifest needs no digest of each entry's compressed bytes.

// seqReader reads a file front to back through a window that holds the bytes not yet
// consumed, hashing every byte once as it is read (on a goroutine of its own, see passHash),
// and checking the ranges the parse read (rangeCheck) on the way.
type seqReader struct {
	ctx  context.Context
	ra   io.ReaderAt
	size int64
	buf  []byte // the window: buf[i] is the byte at off+i; one of bufs
	off  int64
	pos  int64 // the next byte not consumed: off <= pos <= off+len(buf)
	// The window moves between two buffers, so that the hash can still be reading the
	// bytes of one while the other is filled; last is the number of the last chunk of
	// each that was given to the hash.
	bufs [2][]byte
	cur  int
	last [2]int
	sum  *passHash // nil when the pass only keys entries
	rc   rangeCheck
	gate *readGate // nil once passed, or when the parse was over before the pass
}

// maxLocalHeader is the largest local header: its fixed part, a name and an extra field.
const maxLocalHeader = localLen + 2*0xffff

// newSeqReader reads ra, of size bytes, front to back; with hashed set it takes the SHA-256
// of every byte (see finish), and stop must be called once the pass is over.
func newSeqReader(ctx context.Context, ra io.ReaderAt, size int64, reads []readRecord, hashed bool) *seqReader {
	s := &seqReader{ctx: ctx, ra: ra, size: size, rc: rangeCheck{reads: reads}}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, 0, hashBufSize+maxLocalHeader)
	}
	s.buf = s.bufs[0]
	if hashed {
		s.sum = newPassHash()
	}
	return s
}

// stop ends the hash's goroutine.
func (s *seqReader) stop() {
	if s.sum != nil {
		s.sum.stop()
	}
}

func (s *seqReader) avail() int { return int(s.off + int64(len(s.buf)) - s.pos) }

// fill reads more of the file, dropping what was consumed, until need bytes are available
// or the file ends. The window moves into the other buffer once the hash is done with it.
func (s *seqReader) fill(need int) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	next := 1 - s.cur
	if s.sum != nil {
		s.sum.hashed(s.last[next])
	}
	dst := s.bufs[next][:cap(s.bufs[next])]
	kept := copy(dst, s.buf[s.pos-s.off:])
	s.buf, s.off, s.cur = dst[:kept], s.pos, next
	for len(s.buf) < need && s.off+int64(len(s.buf)) < s.size {
		at := s.off + int64(len(s.buf))
		room := s.buf[len(s.buf):min(int64(cap(s.buf)), int64(len(s.buf))+s.size-at)]
		n, err := s.ra.ReadAt(room, at)
		if n == 0 && err != nil {
			if err == io.EOF { // cut short since it was opened (a wrapped EOF is a read that failed in transit)
				return ErrNotAsRecorded
			}
			return err
		}
		if s.sum != nil {
			s.last[next] = s.sum.add(room[:n])
		}
		if s.gate != nil && at+int64(n) > s.gate.off {
			if err := s.passGate(at); err != nil {
				return err
			}
		}
		if !s.rc.feed(room[:n], at) {
			return ErrNotAsRecorded
		}
		s.buf = s.buf[:len(s.buf)+n]
	}
	return nil
}

// peek returns the next need bytes without consuming them; fewer at the end of the file.
func (s *seqReader) peek(need int) ([]byte, error) {
	if s.avail() < need {
		if err := s.fill(need); err != nil {
			return nil, err
		}
	}
	i := int(s.pos - s.off)
	return s.buf[i : i+min(need, s.avail())], nil
}

// skipTo consumes the bytes up to the offset at, which must not be behind.
func (s *seqReader) skipTo(at int64) error {
	for s.pos < at {
		if s.avail() == 0 {
			if err := s.fill(1); err != nil {
				return err
			}
			if s.avail() == 0 {
				return ErrNotAsRecorded
			}
		}
		s.pos += min(at-s.pos, int64(s.avail()))
	}
	return nil
}

// stream consumes the next n bytes into w.
func (s *seqReader) stream(n int64, w io.Writer) error {
	for n > 0 {
		b, err := s.peek(int(min(n, hashBufSize)))
		if err != nil {
			return err
		}
		if len(b) == 0 {
			return ErrNotAsRecorded
		}
		w.Write(b)
		s.pos += int64(len(b))
		n -= int64(len(b))
	}
	return nil
}

// passGate waits for the parse beside the pass, which has fed the bytes before at, and
// takes the ranges it read.
func (s *seqReader) passGate(at int64) error {
	reads, ok := s.gate.wait()
	s.gate = nil
	switch {
	case !ok:
		return errParseFailed
	case !s.rc.add(reads, at):
		return ErrNotAsRecorded
	}
	return nil
}

// errParseFailed stops a pass whose parse failed; the parse's error is the one said.
var errParseFailed = errors.New("the parse beside the pass failed")

// finish reads to the end and says whether the file was what want describes.
func (s *seqReader) finish(want format.Summary) error {
	if err := s.skipTo(s.size); err != nil {
		return err
	}
	if s.gate != nil { // the parse read nothing the pass could still check
		if err := s.passGate(s.size); err != nil {
			return err
		}
	}
	if !s.rc.done() || want.Match(format.Summary{Size: s.size, SHA256: hex.EncodeToString(s.sum.sum())}) != nil {
		return ErrNotAsRecorded
	}
	return nil
}

// window is bytes of a file that a seqReader holds, read by offset.
type window struct {
	b   []byte
	off int64
}

func (w window) ReadAt(p []byte, off int64) (int, error) {
	if off < w.off || off > w.off+int64(len(w.b)) {
		return 0, io.EOF
	}
	n := copy(p, w.b[off-w.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// errOverlap is the damage of an entry that begins inside the one before it.
var errOverlap = errors.New("damaged: its local header is inside the entry before it")

// keyEntry checks the headers of the entry of f, stored as name, as the pass reaches it,
// and takes the keyed digest of its compressed bytes; when the entry is not to be copied,
// damage says why (its headers disagree, or it overlaps the entry before it). err is the
// pass's.
func (s *seqReader) keyEntry(f *refFile, name string, seed maphash.Seed) (damage, err error) {
	hdr := f.header(name)
	damage = checkMethod(hdr)
	if f.local < s.pos {
		damage = errOverlap
	}
	if damage != nil {
		return damage, nil
	}
	if err := s.skipTo(f.local); err != nil {
		return nil, err
	}
	b, err := s.peek(localLen)
	if err != nil {
		return nil, err
	}
	if len(b) == localLen {
		b, err = s.peek(localLen + int(le16(b[26:])) + int(le16(b[28:])))
	}
	if err != nil {
		return nil, err
	}
	lh, err := readLocal(localRef{ra: window{b, s.pos}, off: s.pos}, len(name), 0)
	if err == nil {
		err = lh.compareAs(hdr, false) // its data are copied under a local header of the run's
	}
	if err != nil {
		return err, nil
	}
	return s.keyData(f, hdr, lh, seed)
}

// keyData takes the keyed digest of the data of f's entry, whose central record is hdr and
// local header lh, and checks its data descriptor when it has one.
func (s *seqReader) keyData(f *refFile, hdr *zip.File, lh *localHeader, seed maphash.Seed) (damage, err error) {
	if err := s.skipTo(lh.dataOffset); err != nil {
		return nil, err
	}
	k := newKeyedSum(seed)
	if err := s.stream(f.csize, k); err != nil {
		return nil, err
	}
	if lh.flags&flagDataDesc != 0 {
		b, err := s.peek(24)
		if err != nil {
			return nil, err
		}
		if _, damage := checkDescriptor(window{b, s.pos}, s.pos, hdr, lh.zip64); damage != nil {
			return damage, nil
		}
	}
	f.data, f.key = lh.dataOffset, k.Sum64()
	return nil, nil
}

// keyedBlock is the unit of keyedSum: its digest does not depend on how the bytes are cut
// into writes.
const keyedBlock = 64 << 10

// keyedSum is a digest of a byte stream under a secret seed: maphash of each block of
// keyedBlock bytes, chained through maphash with its predecessor, so that no block can be
// changed, moved or dropped without changing it (the length is fixed by the entry's
// central record). maphash runs at several GB/s where SHA-256 runs at about two. A block is
// hashed as it streams past (a maphash.Hash gives what maphash.Bytes gives for the same
// bytes), so an entry's digest costs no copy and no buffer of its own: two per entry a run
// copies, which were 64 KiB each and most of what a reusing run allocated.
type keyedSum struct {
	seed  maphash.Seed
	sum   uint64
	block maphash.Hash
	n     int // bytes of the current block written to block
}

func newKeyedSum(seed maphash.Seed) *keyedSum {
	k := &keyedSum{seed: seed}
	k.block.SetSeed(seed)
	return k
}

func (k *keyedSum) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		take := min(keyedBlock-k.n, len(p))
		k.block.Write(p[:take])
		k.n += take
		p = p[take:]
		if k.n == keyedBlock {
			k.chain()
		}
	}
	return n, nil
}

// chain folds the digest of the block just ended into the sum.
func (k *keyedSum) chain() {
	var pair [16]byte
	binary.LittleEndian.PutUint64(pair[:], k.sum)
	binary.LittleEndian.PutUint64(pair[8:], k.block.Sum64())
	k.sum = maphash.Bytes(k.seed, pair[:])
	k.block.Reset()
	k.n = 0
}

// Sum64 is the digest of what was written, the last partial block included.
func (k *keyedSum) Sum64() uint64 {
	if k.n > 0 {
		k.chain()
	}
	return k.sum
}
