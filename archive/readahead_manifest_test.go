package archive

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// The reader ahead gives its source's bytes in order, whatever the sizes of the source's
// reads and of its own reader's.
func TestAheadReaderBytes(t *testing.T) {
	for _, n := range []int{0, 1, aheadBlock - 1, aheadBlock, aheadBlock + 1, (aheadBlocks+2)*aheadBlock + 3} {
		data := manifestLike(n)
		for name, src := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return bytes.NewReader(data) },
			"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
			"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		} {
			if name == "one byte" && n > aheadBlock+1 {
				continue // slow, and says nothing more
			}
			a := newAheadReader(src())
			if err := iotest.TestReader(a, data); err != nil {
				t.Errorf("%d bytes, source read %s: %v", n, name, err)
			}
			a.stop()
		}
	}
}

// A read of the source that fails is given after the bytes before it, and every read after.
func TestAheadReaderError(t *testing.T) {
	data := manifestLike(aheadBlock + 1000)
	broken := errors.New("input/output error")
	a := newAheadReader(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(broken)))
	defer a.stop()
	got, err := io.ReadAll(a)
	if !bytes.Equal(got, data) || !errors.Is(err, broken) {
		t.Fatalf("read %d of %d bytes, then %v; want all, then %v", len(got), len(data), err, broken)
	}
	if n, err := a.Read(make([]byte, 10)); n != 0 || !errors.Is(err, broken) {
		t.Errorf("read after the error: %d, %v", n, err)
	}
}

type countingSource struct {
	r     io.Reader
	reads atomic.Int64
}

func (c *countingSource) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.r.Read(p)
}

// stop, before the source is read to its end, leaves no goroutine behind, and nothing
// reads the source after it returns (its caller closes it).
func TestAheadReaderStop(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &countingSource{r: bytes.NewReader(manifestLike(20 * aheadBlock))}
	a := newAheadReader(src)
	if _, err := io.ReadFull(a, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	a.stop()
	reads := src.reads.Load()
	time.Sleep(50 * time.Millisecond)
	if n := src.reads.Load(); n != reads {
		t.Errorf("the source was read %d times after stop returned", n-reads)
	}
	if reads > aheadBlocks+1 {
		t.Errorf("the source was read %d times for 100 bytes; at most %d blocks are read ahead", reads, aheadBlocks+1)
	}
	waitGoroutines(t, before)
}
