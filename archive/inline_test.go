package archive

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"backup/format"
	"backup/walker"
)

// Tests of the small reused entries the writer copies itself (inline.go), through a window
// over the reference.

// inlineTree makes files whose entries the writer copies itself (random, 1 to 20 KiB, so
// that many fill more than one window) and one too large for that.
func inlineTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i := range 60 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), randomData(1<<10+i*331), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f30-large"), randomData(inlineMax+1000), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// inlineEntries is where each entry's compressed bytes are in the archive at path: offset
// and size, by name (acRefEntries keeps the large ones).
func inlineEntries(t *testing.T, path string) map[string][2]int64 {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	m := map[string][2]int64{}
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		m[f.Name] = [2]int64{off, int64(f.CompressedSize64)}
	}
	return m
}

// TestInlineCopyDamagedAfterPass: small entries of the reference changed after the pass
// over it (a byte flipped at the start, middle or end; the reference cut short in the middle
// of one) are read from their files instead, each with a reuse warning, and the archive is
// the one a run without a reference makes.
func TestInlineCopyDamagedAfterPass(t *testing.T) {
	dir := inlineTree(t)
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	for _, jobs := range []int{1, 2} {
		t.Run("flipped/"+strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			ents := inlineEntries(t, path)
			for name, at := range map[string]func(int64) int64{
				"f00": func(int64) int64 { return 0 },
				"f17": func(n int64) int64 { return n / 2 },
				"f59": func(n int64) int64 { return n - 1 },
			} {
				acFlip(t, path, ents[name][0]+at(ents[name][1]))
			}
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
			if n := acReuseWarnings(run); n != 3 {
				t.Errorf("%d reuse warnings, want 3: %v", n, run.warns)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
		t.Run("cut/"+strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			ents := inlineEntries(t, path)
			cut := ents["f40"][0] + ents["f40"][1]/2
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
			if n := acReuseWarnings(run); n != 20 { // f40 to f59
				t.Errorf("%d reuse warnings, want 20: %v", n, run.warns)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
	}
}

// failOnceArmed fails every read once armed.
type failOnceArmed struct {
	ra    io.ReaderAt
	armed *atomic.Bool
}

var errInline = errors.New("injected read error")

func (f failOnceArmed) ReadAt(p []byte, off int64) (int, error) {
	if f.armed.Load() {
		return 0, errInline
	}
	return f.ra.ReadAt(p, off)
}

// TestInlineCopyReadFails: when reading the reference fails after the pass, each small file
// is read from its file instead, with a reuse warning that names the error; the archive is
// whole. A file whose own read then fails too is lost with a warning, never stored.
func TestInlineCopyReadFails(t *testing.T) {
	dir := inlineTree(t)
	path := refArchive(t, dir)
	reread := acReread(t, dir)
	for _, openFails := range []bool{false, true} {
		t.Run(fmt.Sprint("open fails ", openFails), func(t *testing.T) {
			armed := new(atomic.Bool)
			// Through Unseal, the entries are read from what it gives back.
			wrap := func(ra io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
				return failOnceArmed{ra, armed}, size, nil
			}
			r, err := OpenReference(t.Context(), path, fileSum(t, path), format.Deflate, DefaultLevel, ReuseOptions{Unseal: wrap})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			armed.Store(true)
			lost := map[string]bool{"f07": openFails, "f33": openFails}
			open := func(src walker.Handle, name string) (SourceFile, error) {
				if lost[name] {
					return nil, &fs.PathError{Op: "open", Path: name, Err: errInline}
				}
				return openSource(src, name)
			}
			run := acReuseOK(t, dir, Options{Jobs: 2, Reference: r, Open: open})
			var reuse int
			for _, err := range run.warns {
				if errors.Is(err, errInline) && opOf(err) == format.OpReuse {
					reuse++
				}
			}
			if reuse != 61 { // and f30-large's, which its worker copies
				t.Errorf("%d reuse warnings naming the reference's read error, want 61: %v", reuse, run.warns)
			}
			for _, f := range run.files {
				if lost[f.Path] {
					t.Errorf("%s: told as stored", f.Path)
				}
			}
			for name, gone := range lost {
				if gone && !slices.ContainsFunc(run.warns, func(err error) bool { return pathOf(err) == name && opOf(err) == "open" }) {
					t.Errorf("%s: lost without a warning: %v", name, run.warns)
				}
			}
			if !openFails {
				acCheck(t, run.path, dir)
				acSame(t, run.path, reread)
			}
		})
	}
}

func opOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op
	}
	return ""
}

func pathOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}
