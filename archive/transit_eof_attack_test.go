package archive

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// transitShort reads data, but fails the reads that start at off as backupset/s3store's
// Object does when a ranged GET's body ends before the length it announced on every
// attempt: a *fs.PathError wrapping io.ErrUnexpectedEOF "(after 3 attempts)". The object's
// size is known and whole: the read failed in transit, the archive is not cut.
type transitShort struct {
	data []byte
	off  int64
	hits int
}

func (r *transitShort) ReadAt(p []byte, off int64) (int, error) {
	if off == r.off {
		r.hits++
		return 0, &fs.PathError{Op: "read", Path: "s3://bucket/set/a.zip", Err: fmt.Errorf("%w (after 3 attempts)", io.ErrUnexpectedEOF)}
	}
	return bytes.NewReader(r.data).ReadAt(p, off)
}

// TestAttackTransitEOFWordedDamage: readFailed takes any error that wraps io.EOF or
// io.ErrUnexpectedEOF (errors.Is) for the file ending, so a bucket's read that failed in
// transit, which s3store reports as a *fs.PathError wrapping io.ErrUnexpectedEOF once its
// retries are spent, is taken for damage: the walk of the central directory gives
// errCentral ("does not read back the same"), and localRefs marks every local header not
// found instead of failing the open with the read's error. Only a bare io.EOF /
// io.ErrUnexpectedEOF from the reader (as *os.File gives at the end of the file) says the
// file ended.
func TestAttackTransitEOFWordedDamage(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 5 {
		name := "f" + strings.Repeat("x", i)
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte{byte(i)}, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	data, _, _, _ := build(t, dir, names, true, Options{})
	size := int64(len(data))
	zr, err := zip.NewReader(bytes.NewReader(data), size)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(data), size)
	if err != nil {
		t.Fatal(err)
	}
	ra := &transitShort{data: data, off: r.dirStart}

	_, _, err = localRefs(ra, size, zr.File)
	if ra.hits == 0 {
		t.Fatal("the walk did not read at the directory's start")
	}
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("localRefs on a read that failed in transit: %v; want that error (the open fails), not every local header 'not found'", err)
	}

	ra.hits = 0
	err = walkCentral(ra, size, func(*centralRecord) error { return nil })
	if err == errCentral || err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("walkCentral on a read that failed in transit: %v; want that error, not damage", err)
	}
}
