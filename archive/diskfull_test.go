package archive

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"backup/format"
)

// fullDisk accepts limit bytes, then fails every write with ENOSPC, as a full disk does.
type fullDisk struct {
	w     io.Writer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.w.Write(p[:d.limit])
		d.limit = 0
		return n, &os.PathError{Op: "write", Path: "archive", Err: syscall.ENOSPC}
	}
	d.limit -= len(p)
	return d.w.Write(p)
}

// TestWriterDiskFull: a write failure of the archive is fatal, whenever it comes, and Abort
// leaves neither the temp file nor anything at the final path.
func TestWriterDiskFull(t *testing.T) {
	for _, limit := range []int{0, 100, 200_000, 500_000} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			os.Mkdir(src, 0o755)
			for _, name := range []string{"a", "b", "c", "d"} {
				os.WriteFile(filepath.Join(src, name), hexNoise(300_000), 0o644) // deflates to about half
			}
			out := filepath.Join(dir, "out")
			os.Mkdir(out, 0o755)
			w, err := Create(context.Background(), out, "a.zip", Options{Level: 1, Output: func(f *os.File) io.Writer {
				return &fullDisk{w: f, limit: limit}
			}})
			if err != nil {
				t.Fatal(err)
			}
			var addErr error
			held := heldFiles(t, src)
			for _, name := range []string{"a", "b", "c", "d"} {
				f := held[name]
				if addErr != nil {
					f.src.Release()
					continue
				}
				addErr = w.AddFile(f.src, "src/"+name, f.info, nil)
			}
			_, err = w.CloseManifest(&format.Manifest{})
			if addErr != nil {
				err = addErr
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("got %v, want ENOSPC", err)
			}
			w.Abort()
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func hexNoise(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[rng.IntN(16)]
	}
	return b
}
