package archive

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
)

// failOnce fails its first read with EIO, as a flaky disk or a bucket's 5xx may, then
// reads data.
type failOnce struct {
	data   []byte
	failed bool
}

func (f *failOnce) ReadAt(p []byte, off int64) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, syscall.EIO
	}
	return bytes.NewReader(f.data).ReadAt(p, off)
}

// TestReadAheadKeepsError: a span whose read fails gives that error to the first read past
// what it got, as reading the entries one by one would have met it, instead of reading
// again and passing the failure over; later reads go to the archive. An end of file is
// not such an error: the reads past it meet it themselves.
func TestReadAheadKeepsError(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100)
	var w readAhead
	ra := w.loadSpan(&failOnce{data: data}, 0, 500)
	p := make([]byte, 10)
	if _, err := ra.ReadAt(p, 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first read: %v, want EIO", err)
	}
	if n, err := ra.ReadAt(p, 10); err != nil || n != 10 || !bytes.Equal(p, data[10:20]) {
		t.Fatalf("second read: %d, %v, %q", n, err, p[:n])
	}
	ra = w.loadSpan(bytes.NewReader(data), 900, 1100)
	if n, err := ra.ReadAt(p, 990); err != nil || n != 10 {
		t.Fatalf("read within the short span: %d, %v", n, err)
	}
	if _, err := ra.ReadAt(p, 995); !errors.Is(err, io.EOF) {
		t.Fatalf("read past the end: %v, want EOF", err)
	}
}
