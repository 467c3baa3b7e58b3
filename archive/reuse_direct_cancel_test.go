package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestAttackCopyCancelled (held): a reusing run with large entries (some damaged, taken back
// and read from their files) cancelled at points spread over it fails with the context's
// error, never hangs, and leaves no temp file.
func TestAttackCopyCancelled(t *testing.T) {
	dir := acTree(t, 5, 2)
	ref := refArchive(t, dir)
	refData, _ := os.ReadFile(ref)
	size := int64(len(refData))
	for _, at := range []int64{1, 1 << 20, size / 4, size / 2, size * 3 / 4} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(strconv.FormatInt(at, 10)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "ref.zip")
				os.WriteFile(path, refData, 0o644)
				r, err := openRef(t, path, DefaultLevel)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				ents := acRefEntries(t, path)
				e := ents[fmt.Sprintf("f%02d-large", 2)]
				acFlip(t, path, e[0]+e[1]/2)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				out := func(f *os.File) io.Writer { return &acTrigger{w: f, at: at, f: cancel} }
				var run acRun
				acWithin(t, 20*time.Second, func() {
					run = acArchive(t, ctx, dir, Options{Jobs: jobs, Reference: r, Output: out})
				})
				if !errors.Is(run.err, context.Canceled) {
					t.Errorf("got %v, want context.Canceled", run.err)
				}
			})
		}
	}
}
