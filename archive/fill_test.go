package archive

import (
	"io"
	"strings"
	"testing"
)

// countingReader returns at most max bytes a read, counting the reads.
type countingReader struct {
	r     io.Reader
	max   int
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p[:min(len(p), c.max)])
}

// TestFill: a file whose fstat size fits the buffer costs one read when that read returns it
// all; a short read, or a file longer than fstat said (it grew), is read on to its end.
func TestFill(t *testing.T) {
	for _, c := range []struct {
		name          string
		content       string
		size          int64 // what fstat said
		max           int
		wantN, wantRd int
		wantErr       error
	}{
		{"whole in one read", "hello", 5, 100, 5, 1, io.EOF},
		{"empty", "", 0, 100, 0, 1, io.EOF},
		{"short reads", "hello", 5, 2, 5, 4, io.EOF},
		{"grew", "hello, world", 5, 100, 12, 2, io.EOF},
		{"shrank", "hel", 5, 100, 3, 2, io.EOF},
		{"fills the buffer", strings.Repeat("x", 20), 20, 100, 16, 1, nil},
		{"larger than fstat said", strings.Repeat("x", 20), 0, 100, 16, 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &countingReader{r: strings.NewReader(c.content), max: c.max}
			buf := make([]byte, 16)
			n, err := fill(r, buf, c.size)
			if n != c.wantN || r.reads != c.wantRd || (err == nil) != (c.wantErr == nil) {
				t.Errorf("fill: %d bytes in %d reads, %v; want %d in %d, %v", n, r.reads, err, c.wantN, c.wantRd, c.wantErr)
			}
			if string(buf[:n]) != c.content[:n] {
				t.Errorf("read %q, want %q", buf[:n], c.content[:n])
			}
		})
	}
}
