package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"backup/walker"
)

// acChanging says its file's mtime moved on while it was read.
type acChanging struct {
	SourceFile
	stats int
}

type acInfo struct {
	fs.FileInfo
	mod time.Time
}

func (i acInfo) ModTime() time.Time { return i.mod }

func (f *acChanging) Stat() (fs.FileInfo, error) {
	info, err := f.SourceFile.Stat()
	f.stats++
	if err != nil || f.stats == 1 {
		return info, err
	}
	return acInfo{info, info.ModTime().Add(time.Second)}, nil
}

// TestAttackCopyFallbackChanging (held): a damaged large entry taken back, whose file then
// seems to change while it is read (every read streamed into the archive and taken back
// again, the last kept), ends as one entry holding the file's bytes, with a changed warning.
func TestAttackCopyFallbackChanging(t *testing.T) {
	dir := acTree(t, 5, 1)
	ref := refArchive(t, dir)
	refData, _ := os.ReadFile(ref)
	for _, jobs := range []int{1, 2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ref.zip")
			os.WriteFile(path, refData, 0o644)
			r, err := openRef(t, path, DefaultLevel)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ents := acRefEntries(t, path)
			bad := map[string]bool{}
			for _, i := range []int{1, 2, 4} {
				name := fmt.Sprintf("f%02d-large", i)
				e := ents[name]
				acFlip(t, path, e[0]+e[1]/3)
				bad[name] = true
			}
			var mu sync.Mutex
			opens := map[string]int{}
			open := func(src walker.Handle, name string) (SourceFile, error) {
				f, err := openSource(src, name)
				if err == nil && bad[name] {
					mu.Lock()
					opens[name]++
					mu.Unlock()
					return &acChanging{SourceFile: f}, nil
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
			changed := 0
			for _, w := range run.warns {
				if errors.Is(w, ErrChanged) {
					changed++
				}
			}
			if changed != len(bad) {
				t.Errorf("%d changed warnings, want %d: %v", changed, len(bad), run.warns)
			}
			for name := range bad {
				if opens[name] != maxReads {
					t.Errorf("%s opened %d times", name, opens[name])
				}
			}
			acCheck(t, run.path, dir)
		})
	}
}
