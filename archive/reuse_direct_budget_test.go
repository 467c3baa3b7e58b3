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

// TestAttackCopyBudgetSpent (held): entries small enough to hold (compressed below the spool
// limit) but large enough to stream are copied into the archive by their worker once the
// spools' budget is spent, as other workers hold entries while the writer waits on a large
// file read afresh; some are damaged after the pass. The archive is the one a run without a
// reference writes, with one reuse warning per damaged entry.
func TestAttackCopyBudgetSpent(t *testing.T) {
	dir := t.TempDir()
	noise := hexNoise(1_800_000)
	for i := range 20 {
		data := append([]byte(strconv.Itoa(i)), noise[i*100:]...)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("b%02d", i)), data, 0o644)
	}
	big := filepath.Join(dir, "a-big")
	os.WriteFile(big, randomData(12<<20), 0o644)
	ref := refArchive(t, dir)
	os.WriteFile(big, randomData(12<<20+1), 0o644) // read afresh, first: the others wait for it
	reread := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if reread.err != nil {
		t.Fatal(reread.err)
	}
	refData, _ := os.ReadFile(ref)
	for _, jobs := range []int{2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ref.zip")
			os.WriteFile(path, refData, 0o644)
			r, err := openRef(t, path, DefaultLevel)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			zr, err := zip.OpenReader(path)
			if err != nil {
				t.Fatal(err)
			}
			flipped := 0
			for i, f := range zr.File {
				if f.Name == "a-big" || f.Name == format.ManifestName {
					continue
				}
				if f.CompressedSize64 >= chunkSize || f.UncompressedSize64 < chunkSize {
					t.Fatalf("%s: %d compressed, %d bytes", f.Name, f.CompressedSize64, f.UncompressedSize64)
				}
				if i%4 == 3 {
					off, _ := f.DataOffset()
					acFlip(t, path, off+int64(f.CompressedSize64)/2)
					flipped++
				}
			}
			zr.Close()
			var run acRun
			acWithin(t, 20*time.Second, func() { run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r}) })
			if run.err != nil {
				t.Fatal(run.err)
			}
			if n := acReuseWarnings(run); n != flipped {
				t.Errorf("%d reuse warnings, want %d", n, flipped)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread.path)
		})
	}
}
