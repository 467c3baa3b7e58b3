package archive

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAttackCopyDiskFullWithTakeBack (held): the disk fills at points spread over a reusing
// run whose large entries are partly damaged (taken back and read from their files), with
// small files between them: the run fails with ENOSPC, never hangs, and leaves nothing.
func TestAttackCopyDiskFullWithTakeBack(t *testing.T) {
	dir := acTree(t, 5, 2)
	ref := refArchive(t, dir)
	refData, _ := os.ReadFile(ref)
	size := len(refData)
	for _, limit := range []int{0, 50, 1 << 20, size / 5, size / 3, size / 2, size * 3 / 4, size - 5000} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(strconv.Itoa(limit)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "ref.zip")
				os.WriteFile(path, refData, 0o644)
				r, err := openRef(t, path, DefaultLevel)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				ents := acRefEntries(t, path)
				for i := 1; i < 5; i += 2 {
					e := ents[fmt.Sprintf("f%02d-large", i)]
					acFlip(t, path, e[0]+e[1]-10)
				}
				out := func(f *os.File) io.Writer { return &fullDisk{w: f, limit: limit} }
				var run acRun
				acWithin(t, 20*time.Second, func() {
					run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Output: out})
				})
				if !errors.Is(run.err, syscall.ENOSPC) {
					t.Errorf("got %v, want ENOSPC", run.err)
				}
			})
		}
	}
}
