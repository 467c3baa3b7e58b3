package archive

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// acTrigger calls f once, when the archive's writes pass at bytes.
type acTrigger struct {
	w     io.Writer
	n, at int64
	f     func()
}

func (a *acTrigger) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	before := a.n
	a.n += int64(n)
	if before < a.at && a.n >= a.at && a.f != nil {
		a.f()
		a.f = nil
	}
	return n, err
}

// TestAttackCopyChangedDuringCopy (held): the reference is changed while the run writes the
// archive, at points spread over it: every byte after the trigger point of every large entry
// is flipped, or the reference truncated there. Entries whose bytes then differ are taken
// back and read from their files; the archive holds the files' bytes and is the archive of
// a run without a reference.
func TestAttackCopyChangedDuringCopy(t *testing.T) {
	dir := acTree(t, 5, 1)
	ref := refArchive(t, dir)
	reread := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if reread.err != nil {
		t.Fatal(reread.err)
	}
	refData, _ := os.ReadFile(ref)
	size := int64(len(refData))
	for _, mode := range []string{"flip", "truncate"} {
		for _, at := range []int64{1, size / 3, size * 2 / 3, size * 9 / 10} {
			for _, jobs := range []int{1, 2, 8} {
				t.Run(mode+"/"+strconv.FormatInt(at, 10)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
					path := filepath.Join(t.TempDir(), "ref.zip")
					os.WriteFile(path, refData, 0o644)
					r, err := openRef(t, path, DefaultLevel)
					if err != nil {
						t.Fatal(err)
					}
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
					var run acRun
					acWithin(t, 20*time.Second, func() {
						run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Output: out})
					})
					if run.err != nil {
						t.Fatal(run.err)
					}
					acCheck(t, run.path, dir)
					acSame(t, run.path, reread.path)
				})
			}
		}
	}
}
