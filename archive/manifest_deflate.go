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

// manifestLevel is the deflate level of the manifest, whatever the files' level. A manifest
// is JSON lines, each with a path and a digest in hex that no search shortens, and
// klauspost's level 2 finds nearly what level 6 finds in such text at less than half the
// CPU. Measured 2026-12-04 on two manifests in 1 MiB chunks: the bench corpus's (8.5 MB)
// 1.674 MB in 22 ms at level 2 against 1.683 MB in 51 ms at level 6; /usr/share and
// /usr/include's (14 MB) 2.774 MB in 35 ms against 2.707 MB in 81 ms. The manifest is
// the only entry an unchanged reusing run deflates, so there it is most of the run's
// deflate.
const manifestLevel = 2

// chunkWriter deflates what is written to it into dst, at manifestLevel, one chunk at a time
// on a pool of its own that shares the buffers of the files' pool, done by then. Close ends
// the stream; abort stops the pool without ending it.
type chunkWriter struct {
	s   stream
	buf []byte // the chunk being filled, a pool buffer; nil before the first write
}

func newChunkWriter(dst io.Writer, files *chunkPool) (*chunkWriter, error) {
	comp, err := newCompressor(format.Deflate, manifestLevel, cap(files.work))
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
