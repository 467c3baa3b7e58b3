package archive

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"backup/walker"
)

// TestAttackCopyRandomDamage (held): reusing runs over large entries interleaved with small
// ones, with the reference damaged at random points of the run (bytes flipped, truncated,
// zeroed from a point on) and workers delayed at random as they open files: each run ends,
// its archive is whole and is the archive of a run without a reference.
func TestAttackCopyRandomDamage(t *testing.T) {
	dir := acTree(t, 8, 2)
	ref := refArchive(t, dir)
	reread := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if reread.err != nil {
		t.Fatal(reread.err)
	}
	refData, _ := os.ReadFile(ref)
	size := int64(len(refData))
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	var mu sync.Mutex
	deadline := time.Now().Add(4 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		path := filepath.Join(t.TempDir(), "ref.zip")
		os.WriteFile(path, refData, 0o644)
		r, err := openRef(t, path, DefaultLevel)
		if err != nil {
			t.Fatal(err)
		}
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
		var run acRun
		acWithin(t, 20*time.Second, func() {
			run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Output: out, Open: open})
		})
		r.Close()
		if run.err != nil {
			t.Fatalf("round %d (at %d, from %d, mode %d, jobs %d): %v", i, at, from, mode, jobs, run.err)
		}
		acSame(t, run.path, reread.path)
		if t.Failed() {
			acCheck(t, run.path, dir)
			t.Fatalf("round %d (at %d, from %d, mode %d, jobs %d)", i, at, from, mode, jobs)
		}
	}
}
