package archive

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestAttackCopyFlippedAfterPass (held): large entries of the reference damaged after the
// pass over it (one byte flipped at the start, middle or end of some of them) are taken back
// and read from their files, with a reuse warning each; the archive is whole, holds the
// files' bytes, and is the archive a run without a reference makes, for any number of jobs.
func TestAttackCopyFlippedAfterPass(t *testing.T) {
	dir := acTree(t, 6, 2)
	ref := refArchive(t, dir)
	reread := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if reread.err != nil {
		t.Fatal(reread.err)
	}
	for _, jobs := range []int{1, 2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ref.zip")
			data, _ := os.ReadFile(ref)
			os.WriteFile(path, data, 0o644)
			r, err := openRef(t, path, DefaultLevel)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ents := acRefEntries(t, path)
			flipped := 0
			for i := range 6 {
				e, ok := ents[fmt.Sprintf("f%02d-large", i)]
				if !ok {
					t.Fatal("no large entry")
				}
				switch i % 3 {
				case 0:
					acFlip(t, path, e[0]+e[1]-1) // last byte
					flipped++
				case 1:
					acFlip(t, path, e[0]+e[1]/2)
					flipped++
				}
			}
			var run acRun
			acWithin(t, 20*time.Second, func() { run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r}) })
			if run.err != nil {
				t.Fatal(run.err)
			}
			if n := acReuseWarnings(run); n != flipped {
				t.Errorf("%d reuse warnings, want %d: %v", n, flipped, run.warns)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread.path)
		})
	}
}
