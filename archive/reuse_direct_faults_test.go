package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backup/walker"
)

// TestAttackCopyDiskFullWithTakeBack (held): the disk fills at points spread over a reusing
// run whose large entries are partly damaged (taken back and read from their files), with
// small files between them: the run fails with ENOSPC, never hangs, and leaves nothing.
func TestAttackCopyDiskFullWithTakeBack(t *testing.T) {
	dir := acTree(t, 5, 2)
	refData := acRefData(t, dir)
	size := len(refData)
	for _, limit := range []int{0, 50, 1 << 20, size / 5, size / 3, size / 2, size * 3 / 4, size - 5000} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(strconv.Itoa(limit)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path, r := acRefCopy(t, refData)
				defer r.Close()
				acFlipLarge(t, path, func(n int64) int64 { return n - 10 }, 1, 3)
				out := func(f *os.File) io.Writer { return &fullDisk{w: f, limit: limit} }
				run := acReuse(t, t.Context(), dir, Options{Jobs: jobs, Reference: r, Output: out})
				if !errors.Is(run.err, syscall.ENOSPC) {
					t.Errorf("got %v, want ENOSPC", run.err)
				}
			})
		}
	}
}

// TestAttackCopyCancelled (held): a reusing run with large entries (some damaged, taken back
// and read from their files) cancelled at points spread over it fails with the context's
// error, never hangs, and leaves no temp file.
func TestAttackCopyCancelled(t *testing.T) {
	dir := acTree(t, 5, 2)
	refData := acRefData(t, dir)
	size := int64(len(refData))
	for _, at := range []int64{1, 1 << 20, size / 4, size / 2, size * 3 / 4} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(strconv.FormatInt(at, 10)+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path, r := acRefCopy(t, refData)
				defer r.Close()
				acFlipLarge(t, path, func(n int64) int64 { return n / 2 }, 2)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				out := func(f *os.File) io.Writer { return &acTrigger{w: f, at: at, f: cancel} }
				run := acReuse(t, ctx, dir, Options{Jobs: jobs, Reference: r, Output: out})
				if !errors.Is(run.err, context.Canceled) {
					t.Errorf("got %v, want context.Canceled", run.err)
				}
			})
		}
	}
}

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
	refData := acRefData(t, dir)
	for _, mode := range []string{"open", "read"} {
		for _, jobs := range []int{1, 2, 8} {
			t.Run(mode+"/"+strconv.Itoa(jobs), func(t *testing.T) {
				path, r := acRefCopy(t, refData)
				defer r.Close()
				bad := acFlipLarge(t, path, func(n int64) int64 { return n - 1 }, 0, 2, 3, 5)
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
				run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r, Open: open})
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
	refData := acRefData(t, dir)
	for _, jobs := range []int{1, 2, 8} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			bad := acFlipLarge(t, path, func(n int64) int64 { return n / 3 }, 1, 2, 4)
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
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r, Open: open})
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
