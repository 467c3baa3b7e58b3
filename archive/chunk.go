package archive

import (
	"bytes"
	"io"
	"sync"
)

// Files are read in chunks of chunkSize. A file that fits in one is compressed by the worker
// that read it; a larger file is split, and its chunks are compressed in parallel by the
// chunk pool, as pigz does: each chunk primed with the dictSize bytes before it, its output
// ending in a sync flush, the outputs joined in order into one deflate stream.
const (
	chunkSize = 1 << 20
	dictSize  = 32 << 10 // deflate's window
)

// chunk is one block of a large file on its way through the pool.
type chunk struct {
	data []byte // a read buffer, handed back to the pool once compressed
	dict []byte // a copy of the dictSize bytes before data; empty for the first chunk
	out  bytes.Buffer
	err  error
	done chan struct{}
}

// chunkPool compresses chunks on its own goroutines, and owns the buffers files are read
// into. There is a fixed number of those, so reading holds a bounded amount of memory
// whatever the number and size of the files.
type chunkPool struct {
	comp    *compressor
	work    chan *chunk
	bufs    chan []byte // free read buffers; nil ones are allocated on first use
	chunks  chan *chunk // free chunks, keeping their output buffers (a sync.Pool would drop them at each GC)
	window  int         // chunks of one file in flight at most
	workers sync.WaitGroup
}

func newChunkPool(comp *compressor, workers int) *chunkPool {
	p := &chunkPool{
		comp: comp,
		work: make(chan *chunk, workers),
		// One in the hands of each file worker, one queued and one compressing per chunk
		// worker, and one spare.
		bufs:   make(chan []byte, 3*workers+1),
		chunks: make(chan *chunk, 2*workers+2),
		window: 2*workers + 2,
	}
	for range cap(p.bufs) {
		p.bufs <- nil
	}
	for range workers {
		p.workers.Add(1)
		go p.run(comp.newEncoder())
	}
	return p
}

// withComp starts a pool of as many workers, compressing with comp, that shares p's buffers:
// the manifest's, once p has compressed the files (see manifest_deflate.go). Its buffers
// would be as many again, 7 MiB more of peak memory on 2 cores.
func (p *chunkPool) withComp(comp *compressor) *chunkPool {
	q := &chunkPool{comp: comp, work: make(chan *chunk, cap(p.work)), bufs: p.bufs, chunks: p.chunks, window: p.window}
	for range cap(p.work) {
		q.workers.Add(1)
		go q.run(comp.newEncoder())
	}
	return q
}

func (p *chunkPool) run(enc *encoder) {
	defer p.workers.Done()
	for c := range p.work {
		c.err = enc.compressChunk(&c.out, c.data, c.dict)
		p.putBuf(c.data)
		c.data = nil
		close(c.done)
	}
}

// close stops the workers once the chunks queued are done.
func (p *chunkPool) close() {
	close(p.work)
	p.workers.Wait()
}

// getBuf waits for a free read buffer of chunkSize bytes.
func (p *chunkPool) getBuf() []byte {
	b := <-p.bufs
	if b == nil {
		b = make([]byte, chunkSize)
	}
	return b
}

func (p *chunkPool) putBuf(b []byte) { p.bufs <- b[:cap(b)] }

// stream compresses one large file through the pool, chunk by chunk, keeping the outputs in
// the order of the chunks.
type stream struct {
	pool    *chunkPool
	dst     io.Writer
	pending []*chunk
	tail    []byte // the last dictSize bytes read so far
}

// compressStream compresses first and then the rest of r into dst as one stream, feeding
// every byte read to sum as well. A failed read returns the reader's error; dst then holds
// a partial stream, which the caller discards. The chunks it queued are done when it returns.
func (p *chunkPool) compressStream(first []byte, r io.Reader, dst, sum io.Writer) (int64, error) {
	s := &stream{pool: p, dst: dst, tail: make([]byte, 0, dictSize)}
	n, err := s.run(first, r, sum)
	return n, s.finish(err)
}

// finish writes out the chunks in flight and, unless err (the stream's so far) is set or
// that fails, the stream's end; it returns the first error.
func (s *stream) finish(err error) error {
	for len(s.pending) > 0 { // on error too: the chunks queued hold buffers until done
		if werr := s.writeHead(); err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	return s.pool.comp.end(s.dst)
}

func (s *stream) run(buf []byte, r io.Reader, sum io.Writer) (int64, error) {
	var total int64
	for {
		total += int64(len(buf))
		sum.Write(buf)
		if err := s.queue(buf); err != nil {
			return total, err
		}
		buf = s.pool.getBuf()
		n, err := io.ReadFull(r, buf)
		if n == 0 || (err != nil && err != io.ErrUnexpectedEOF) {
			s.pool.putBuf(buf)
			if err == io.EOF {
				err = nil
			}
			return total, err
		}
		buf = buf[:n]
	}
}

// queue hands data to the pool, first writing out finished chunks while this file has as
// many in flight as it may.
func (s *stream) queue(data []byte) error {
	for len(s.pending) >= s.pool.window {
		if err := s.writeHead(); err != nil {
			s.pool.putBuf(data)
			return err
		}
	}
	var c *chunk
	select {
	case c = <-s.pool.chunks:
	default:
		c = &chunk{}
	}
	c.data, c.err, c.done = data, nil, make(chan struct{})
	c.dict = append(c.dict[:0], s.tail...)
	c.out.Reset()
	s.setTail(data)
	s.pending = append(s.pending, c)
	s.pool.work <- c
	return nil
}

// setTail keeps the last dictSize bytes of the stream read so far.
func (s *stream) setTail(data []byte) {
	if len(data) >= dictSize {
		s.tail = append(s.tail[:0], data[len(data)-dictSize:]...)
		return
	}
	keep := min(len(s.tail), dictSize-len(data))
	s.tail = append(s.tail[:0], s.tail[len(s.tail)-keep:]...)
	s.tail = append(s.tail, data...)
}

// writeHead waits for the oldest chunk in flight and writes its output.
func (s *stream) writeHead() error {
	c := s.pending[0]
	s.pending = s.pending[1:]
	<-c.done
	err := c.err
	if err == nil {
		_, err = s.dst.Write(c.out.Bytes())
	}
	select {
	case s.pool.chunks <- c:
	default: // enough kept
	}
	return err
}
