package archive

import (
	"archive/zip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"backup/format"
	"backup/walker"
)

// TestAttackCopyFlippedAfterPass (held): large entries of the reference damaged after the
// pass over it (one byte flipped at the start, middle or end of some of them) are taken back
// and read from their files, with a reuse warning each; the archive is whole, holds the
// files' bytes, and is the archive a run without a reference makes, for any number of jobs.
func TestAttackCopyFlippedAfterPass(t *testing.T) {
	dir := acTree(t, 6, 2)
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	for _, jobs := range []int{1, 2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			last := acFlipLarge(t, path, func(n int64) int64 { return n - 1 }, 0, 3)
			middle := acFlipLarge(t, path, func(n int64) int64 { return n / 2 }, 1, 4)
			flipped := len(last) + len(middle)
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
			if n := acReuseWarnings(run); n != flipped {
				t.Errorf("%d reuse warnings, want %d: %v", n, flipped, run.warns)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
	}
}

// TestAttackCopyChangedDuringCopy (held): the reference is changed while the run writes the
// archive, at points spread over it: every byte after the trigger point of every large entry
// is flipped, or the reference truncated there. Entries whose bytes then differ are taken
// back and read from their files; the archive holds the files' bytes and is the archive of
// a run without a reference.
func TestAttackCopyChangedDuringCopy(t *testing.T) {
	dir := acTree(t, 5, 1)
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	size := int64(len(refData))
	for _, mode := range []string{"flip", "truncate"} {
		for _, at := range []int64{1, size / 3, size * 2 / 3, size * 9 / 10} {
			for _, jobs := range []int{1, 2, 8} {
				t.Run(mode+"/"+strconv.FormatInt(at, 10)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
					path, r := acRefCopy(t, refData)
					defer r.Close()
					ents := acRefEntries(t, path)
					change := func() {
						// change the reference at the point the archive has got to: the
						// entry being copied now, and all after it
						f, _ := os.OpenFile(path, os.O_RDWR, 0)
						defer f.Close()
						cut := at + 4096
						if mode == "truncate" {
							f.Truncate(cut)
							return
						}
						for _, e := range ents {
							for off := max(e[0], cut); off < e[0]+e[1]; off += 65536 {
								acFlip(t, path, off)
							}
						}
					}
					out := func(f *os.File) io.Writer { return &acTrigger{w: f, at: at, f: change} }
					run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r, Output: out})
					acCheck(t, run.path, dir)
					acSame(t, run.path, reread)
				})
			}
		}
	}
}

// TestAttackCopyRandomDamage (held): reusing runs over large entries interleaved with small
// ones, with the reference damaged at random points of the run (bytes flipped, truncated,
// zeroed from a point on) and workers delayed at random as they open files: each run ends,
// its archive is whole and is the archive of a run without a reference.
func TestAttackCopyRandomDamage(t *testing.T) {
	dir := acTree(t, 8, 2)
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	size := int64(len(refData))
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	var mu sync.Mutex
	deadline := time.Now().Add(4 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		path, r := acRefCopy(t, refData)
		at, from, mode, jobs := rng.Int64N(size), rng.Int64N(size), rng.IntN(3), 1+rng.IntN(8)
		change := func() {
			mu.Lock()
			defer mu.Unlock()
			f, _ := os.OpenFile(path, os.O_RDWR, 0)
			defer f.Close()
			switch mode {
			case 0:
				for off := from; off < size; off += 1 + rng.Int64N(1<<20) {
					acFlip(t, path, off)
				}
			case 1:
				f.Truncate(from)
			case 2:
				f.WriteAt(make([]byte, size-from), from)
			}
		}
		out := func(f *os.File) io.Writer { return &acTrigger{w: f, at: at, f: change} }
		open := func(src walker.Handle, name string) (SourceFile, error) {
			mu.Lock()
			d := time.Duration(rng.IntN(12000)-9000) * time.Microsecond
			mu.Unlock()
			time.Sleep(d)
			return openSource(src, name)
		}
		run := acReuse(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Output: out, Open: open})
		r.Close()
		if run.err != nil {
			t.Fatalf("round %d (at %d, from %d, mode %d, jobs %d): %v", i, at, from, mode, jobs, run.err)
		}
		acSame(t, run.path, reread)
		if t.Failed() {
			acCheck(t, run.path, dir)
			t.Fatalf("round %d (at %d, from %d, mode %d, jobs %d)", i, at, from, mode, jobs)
		}
	}
}

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
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	for _, damage := range []bool{false, true} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(fmt.Sprint(damage, "/", strconv.Itoa(jobs)), func(t *testing.T) {
				path, r := acRefCopy(t, refData)
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
				run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
				acCheck(t, run.path, dir)
				acSame(t, run.path, reread)
			})
		}
	}
}

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
	refData := acRefData(t, dir)
	os.WriteFile(big, randomData(12<<20+1), 0o644) // read afresh, first: the others wait for it
	reread := acReread(t, dir)
	for _, jobs := range []int{2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
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
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
			if n := acReuseWarnings(run); n != flipped {
				t.Errorf("%d reuse warnings, want %d", n, flipped)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
	}
}
