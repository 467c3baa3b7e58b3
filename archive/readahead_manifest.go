package archive

import "io"

// A manifest is inflated on a goroutine of its own while it is parsed (parseEntryWith): the
// two take about the same time (the bench corpus's 8.5 MB manifest, in a reusing run's
// opening of its reference and in its read-back), and one waited for the other.

const (
	aheadBlock  = 256 << 10
	aheadBlocks = 4
)

// aheadReader reads r on a goroutine, up to aheadBlocks blocks ahead of its reader. Its
// reads give r's bytes in order, then r's first error. stop must be called before r is
// closed or read by anyone else.
type aheadReader struct {
	full chan aheadBlockRead
	free chan []byte // nil ones are made on first use: a small manifest takes one block
	quit chan struct{}
	done chan struct{}
	cur  aheadBlockRead
	off  int
}

type aheadBlockRead struct {
	b   []byte
	err error // r's, after b; io.EOF at its end
}

func newAheadReader(r io.Reader) *aheadReader {
	a := &aheadReader{
		full: make(chan aheadBlockRead, aheadBlocks),
		free: make(chan []byte, aheadBlocks),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range aheadBlocks {
		a.free <- nil
	}
	go a.fill(r)
	return a
}

func (a *aheadReader) fill(r io.Reader) {
	defer close(a.done)
	for {
		var b []byte
		select {
		case b = <-a.free:
		case <-a.quit:
			return
		}
		if b == nil {
			b = make([]byte, aheadBlock)
		}
		n, err := readBlock(r, b)
		select {
		case a.full <- aheadBlockRead{b: b[:n], err: err}:
		case <-a.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (a *aheadReader) Read(p []byte) (int, error) {
	for a.off == len(a.cur.b) {
		if a.cur.err != nil {
			return 0, a.cur.err
		}
		if a.cur.b != nil {
			a.free <- a.cur.b[:cap(a.cur.b)]
		}
		a.cur, a.off = <-a.full, 0
	}
	n := copy(p, a.cur.b[a.off:])
	a.off += n
	return n, nil
}

// stop ends the goroutine, once the read of r it may be in has returned.
func (a *aheadReader) stop() {
	close(a.quit)
	<-a.done
}

// readBlock fills b from r, as io.ReadFull does, but gives r's own error as it is: a short
// last block ends in io.EOF, and an io.ErrUnexpectedEOF is r's (a source cut short).
func readBlock(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
