package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backup/walker"
)

// acFailing reads its file, failing after limit bytes.
type acFailing struct {
	SourceFile
	limit int
}

func (f *acFailing) Read(p []byte) (int, error) {
	if f.limit <= 0 {
		return 0, errAC
	}
	if len(p) > f.limit {
		p = p[:f.limit]
	}
	n, err := f.SourceFile.Read(p)
	f.limit -= n
	return n, err
}

// TestAttackCopyFallbackFails (held): a damaged large entry taken back, whose file then
// cannot be opened, or fails to read half way through (after its bytes started going into
// the archive), is lost with a warning naming it, never silently; the archive holds every
// other file whole, and the entries after it are copied.
func TestAttackCopyFallbackFails(t *testing.T) {
	dir := acTree(t, 6, 1)
	ref := refArchive(t, dir)
	refData, _ := os.ReadFile(ref)
	for _, mode := range []string{"open", "read"} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(mode+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "ref.zip")
				os.WriteFile(path, refData, 0o644)
				r, err := openRef(t, path, DefaultLevel)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				ents := acRefEntries(t, path)
				bad := map[string]bool{}
				for _, i := range []int{0, 2, 3, 5} {
					name := fmt.Sprintf("f%02d-large", i)
					e := ents[name]
					acFlip(t, path, e[0]+e[1]-1)
					bad[name] = true
				}
				open := func(src walker.Handle, name string) (SourceFile, error) {
					if bad[name] && mode == "open" {
						return nil, &fs.PathError{Op: "open", Path: name, Err: errAC}
					}
					f, err := openSource(src, name)
					if err == nil && bad[name] {
						return &acFailing{SourceFile: f, limit: 1<<20 + 200_000}, nil
					}
					return f, err
				}
				var run acRun
				acWithin(t, 20*time.Second, func() {
					run = acArchive(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Open: open})
				})
				if run.err != nil {
					t.Fatal(run.err)
				}
				for _, f := range run.files {
					if bad[f.Path] {
						t.Errorf("%s: told as stored", f.Path)
					}
				}
				for name := range bad {
					if !slices.ContainsFunc(run.warns, func(err error) bool {
						var pe *fs.PathError
						return errors.As(err, &pe) && pe.Path == name && errors.Is(err, errAC)
					}) {
						t.Errorf("%s: lost without a warning: %v", name, run.warns)
					}
				}
				// the archive: whole, and the other files in it
				gone := t.TempDir()
				ents2, _ := os.ReadDir(dir)
				for _, e := range ents2 {
					if !bad[e.Name()] {
						data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
						os.WriteFile(filepath.Join(gone, e.Name()), data, 0o644)
					}
				}
				acCheck(t, run.path, gone)
				if n := strings.Count(fmt.Sprint(run.warns), "reuse"); n < len(bad) {
					t.Errorf("%d reuse warnings", n)
				}
			})
		}
	}
}
