package archive

import (
	"io"

	"backup/format"
)

// The manifest is deflated in chunks on a pool of its own, as a large file is (see
// chunk.go), so that all cores share it: it is written last, when nothing else is left to
// run, and deflating it on one core took 0.1 s of an unchanged set run's 0.7 on the bench
// corpus, and more than a second at a million files. Chunks of a fixed size make the same
// bytes whatever the number of workers.

// chunkWriter deflates what is written to it into dst, at DefaultLevel, one chunk at a time
// on a pool of its own that shares the buffers of the files' pool, done by then. Close ends
// the stream; abort stops the pool without ending it.
type chunkWriter struct {
	s   stream
	buf []byte // the chunk being filled, a pool buffer; nil before the first write
}

func newChunkWriter(dst io.Writer, files *chunkPool) (*chunkWriter, error) {
	comp, err := newCompressor(format.Deflate, DefaultLevel, cap(files.work))
	if err != nil {
		return nil, err
	}
	return &chunkWriter{s: stream{pool: files.withComp(comp), dst: dst, tail: make([]byte, 0, dictSize)}}, nil
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.buf == nil {
			c.buf = c.s.pool.getBuf()[:0]
		}
		k := copy(c.buf[len(c.buf):cap(c.buf)], p)
		c.buf, p = c.buf[:len(c.buf)+k], p[k:]
		if len(c.buf) == cap(c.buf) {
			full := c.buf
			c.buf = nil
			if err := c.s.queue(full); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// Close writes out the chunks in flight and the stream's end (stream.finish), and stops
// the pool.
func (c *chunkWriter) Close() error {
	var err error
	if c.buf != nil {
		err = c.s.queue(c.buf)
		c.buf = nil
	}
	err = c.s.finish(err)
	c.s.pool.close()
	return err
}

// abort stops the pool once the chunks in flight are done, writing nothing more.
func (c *chunkWriter) abort() {
	for _, ch := range c.s.pending {
		<-ch.done
	}
	c.s.pending = nil
	c.s.pool.close()
}
