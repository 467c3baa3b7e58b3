package archive

import (
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// compressor hands out deflate writers, reusing them: a deflate writer's state is large, and
// a backup makes one per file.
type compressor struct {
	pools sync.Map // level -> *sync.Pool of *flate.Writer
}

type pooledWriter struct {
	*flate.Writer
	pool *sync.Pool
}

func (w pooledWriter) Close() error {
	err := w.Writer.Close()
	w.pool.Put(w.Writer)
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// open returns a writer that compresses into w at level; level 0 stores.
func (c *compressor) open(w io.Writer, level int) (io.WriteCloser, error) {
	if level == 0 {
		return nopCloser{w}, nil
	}
	p, _ := c.pools.LoadOrStore(level, &sync.Pool{})
	pool := p.(*sync.Pool)
	if fw, ok := pool.Get().(*flate.Writer); ok {
		fw.Reset(w)
		return pooledWriter{fw, pool}, nil
	}
	fw, err := flate.NewWriter(w, level)
	if err != nil {
		return nil, err
	}
	return pooledWriter{fw, pool}, nil
}
