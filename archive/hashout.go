package archive

import (
	"crypto/sha256"
	"encoding"
	"hash"
	"hash/maphash"
	"io"
	"sync"
)

// hashedOut is where the archive's bytes go: it counts and hashes them (the archive's size
// and SHA-256 for the receipt come from the bytes as they are written, not from a second
// read) and buffers them into few large writes. A full buffer is written and hashed on a
// goroutine of its own while the next fills: a worker streaming a large entry that does not
// compress spent most of its time on the archive's SHA-256, and one such file's hashing
// waited for another's (4 x 100 MB of random data and 3 x 60 MB of source: 1.67 -> 1.48 s).
// Buffers go out one after the other, so the bytes are written and hashed in the order they
// came. A write that fails is told by the next Write or Flush and by every one after: the
// archive is then the run's failure, whatever came after.
type hashedOut struct {
	w   io.Writer
	h   hash.Hash
	key *maphash.Hash // a file's bytes, for ReadBack (writtenKey); nil for a stream
	n   int64         // bytes taken, written or on their way

	cur []byte // filling, of cap writeBuffer
	// out are the buffers handed over and not yet written and hashed, oldest first; each
	// has its done, closed when it is.
	out  []sent
	free [][]byte

	mu  sync.Mutex
	err error
}

// sent is a buffer on its way: written is closed once it is written, hashed once it is
// hashed.
type sent struct {
	buf     []byte
	written chan struct{}
	hashed  chan struct{}
}

// outBuffers is how many buffers of writeBuffer bytes may be on their way at once, besides
// the one filling.
const outBuffers = 2

func newHashedOut(w io.Writer, keyed bool) *hashedOut {
	o := &hashedOut{w: w, h: sha256.New()}
	if keyed {
		o.key = new(maphash.Hash)
		o.key.SetSeed(maphash.MakeSeed())
	}
	return o
}

func (o *hashedOut) Write(p []byte) (int, error) {
	if err := o.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		if o.cur == nil {
			o.cur = o.buffer()
		}
		k := copy(o.cur[len(o.cur):cap(o.cur)], p)
		o.cur = o.cur[:len(o.cur)+k]
		p = p[k:]
		if len(o.cur) == cap(o.cur) {
			o.send()
		}
	}
	o.n += int64(n)
	return n, nil
}

// buffer returns an empty buffer: a free one, or the oldest on its way once it is done.
func (o *hashedOut) buffer() []byte {
	if len(o.out) == outBuffers {
		o.reap()
	}
	if k := len(o.free); k > 0 {
		b := o.free[k-1]
		o.free = o.free[:k-1]
		return b[:0]
	}
	return make([]byte, 0, writeBuffer)
}

// reap waits for the oldest buffer on its way, and frees it.
func (o *hashedOut) reap() {
	s := o.out[0]
	<-s.written
	<-s.hashed
	o.out = o.out[1:]
	o.free = append(o.free, s.buf)
}

// send hands the filling buffer to two goroutines: one writes it once the buffer before is
// written, the other hashes it once the buffer before is hashed. The SHA-256 of a buffer
// took 2.7 times as long as its write into the page cache; one after the other, they held a
// worker copying a reference's large entries into the archive to 1 GB/s.
func (o *hashedOut) send() {
	var wrote, hashed chan struct{}
	if k := len(o.out); k > 0 {
		wrote, hashed = o.out[k-1].written, o.out[k-1].hashed
	}
	s := sent{buf: o.cur, written: make(chan struct{}), hashed: make(chan struct{})}
	o.cur = nil
	o.out = append(o.out, s)
	go o.writeOut(s, wrote)
	go o.hashOut(s, hashed)
}

func (o *hashedOut) writeOut(s sent, before <-chan struct{}) {
	defer close(s.written)
	if before != nil {
		<-before
	}
	if o.failed() != nil {
		return
	}
	n, err := o.w.Write(s.buf)
	if err == nil && n < len(s.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.mu.Lock()
		o.err = err
		o.mu.Unlock()
	}
}

// hashOut hashes the buffer s. After a failed write the hashes no longer matter: the
// archive is the run's failure.
func (o *hashedOut) hashOut(s sent, before <-chan struct{}) {
	defer close(s.hashed)
	if before != nil {
		<-before
	}
	o.h.Write(s.buf)
	if o.key != nil {
		o.key.Write(s.buf)
	}
}

func (o *hashedOut) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Flush writes and hashes everything taken so far, and returns the first write's error.
// Then, until the next Write, the archive file ends at n and the hashes are of every byte.
func (o *hashedOut) Flush() error {
	if len(o.cur) > 0 {
		o.send()
	}
	for len(o.out) > 0 {
		o.reap()
	}
	return o.failed()
}

// hashState is a hashedOut's hashes at one point of the archive, to go back to.
type hashState struct {
	sha []byte
	key maphash.Hash
}

// state flushes, and returns the hashes of everything taken so far.
func (o *hashedOut) state() (hashState, error) {
	if err := o.Flush(); err != nil {
		return hashState{}, err
	}
	sha, err := o.h.(encoding.BinaryMarshaler).MarshalBinary()
	s := hashState{sha: sha}
	if o.key != nil {
		s.key = *o.key
	}
	return s, err
}

// restore puts the hashes back to s, and the count to n; nothing may be on its way (Flush).
func (o *hashedOut) restore(s hashState, n int64) error {
	o.n = n
	if o.key != nil {
		*o.key = s.key
	}
	return o.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(s.sha)
}
