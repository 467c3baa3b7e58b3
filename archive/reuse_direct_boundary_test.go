package archive

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"backup/format"
)

// TestAttackCopyBoundaries (held): files at the sizes where an entry starts to stream (one
// chunk) and to be too large to hold (the spool limit), random and compressible, reused
// whole or damaged after the pass: the archive is the one a run without a reference writes.
func TestAttackCopyBoundaries(t *testing.T) {
	dir := t.TempDir()
	i := 0
	for _, n := range []int{chunkSize - 1, chunkSize, chunkSize + 1, chunkSize + 64<<10, 2 * chunkSize, 2*chunkSize + 1} {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%02d", i)), randomData(n), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%02d", i)), hexNoise(n), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%02d", i)), []byte("x"), 0o644)
		i++
	}
	ref := refArchive(t, dir)
	reread := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if reread.err != nil {
		t.Fatal(reread.err)
	}
	refData, _ := os.ReadFile(ref)
	for _, damage := range []bool{false, true} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(fmt.Sprint(damage, "/", strconv.Itoa(jobs)), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "ref.zip")
				os.WriteFile(path, refData, 0o644)
				r, err := openRef(t, path, DefaultLevel)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if damage {
					zr, _ := zip.OpenReader(path)
					for _, f := range zr.File {
						if f.Name != format.ManifestName && f.CompressedSize64 > 1 {
							off, _ := f.DataOffset()
							acFlip(t, path, off+int64(f.CompressedSize64)-1)
						}
					}
					zr.Close()
				}
				var run acRun
				acWithin(t, 20*time.Second, func() { run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r}) })
				if run.err != nil {
					t.Fatal(run.err)
				}
				acCheck(t, run.path, dir)
				acSame(t, run.path, reread.path)
			})
		}
	}
}
