package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAttackInlineFallbackLargeAfterPoolClosed (FAILED on ab33408: "send on closed
// channel"): a file larger than a chunk that compresses to at most inlineMax is copied
// inline; when its reference entry is damaged after the pass, the writing goroutine reads
// it through the chunk pool, which Wait closed once the workers were done, before the
// writing goroutine was. Now the file is read again, with one reuse warning.
func TestAttackInlineFallbackLargeAfterPoolClosed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("a"), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	for _, jobs := range []int{1, 2} {
		t.Run(strconv.Itoa(jobs), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			ents := inlineEntries(t, path)
			if ents["big"][1] > inlineMax {
				t.Fatalf("big: %d bytes compressed, not inline", ents["big"][1])
			}
			acFlip(t, path, ents["big"][0]+ents["big"][1]/2)
			run := acReuseOK(t, dir, Options{Jobs: jobs, Reference: r})
			if n := acReuseWarnings(run); n != 1 {
				t.Errorf("%d reuse warnings, want 1: %v", n, run.warns)
			}
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
	}
}

// attackFailAfter fails every write once limit bytes have gone through (a full disk), or
// writes short when short is set.
type attackFailAfter struct {
	w     io.Writer
	n     int64
	limit int64
	short bool
}

func (f *attackFailAfter) Write(p []byte) (int, error) {
	if f.n+int64(len(p)) > f.limit {
		k := f.limit - f.n
		if k < 0 {
			k = 0
		}
		m, _ := f.w.Write(p[:k])
		f.n += int64(m)
		if f.short {
			return m, nil
		}
		return m, syscall.ENOSPC
	}
	m, err := f.w.Write(p)
	f.n += int64(m)
	return m, err
}

// TestAttackInlineDiskFullEveryBuffer (held): a reusing run whose entries are all copied
// inline, its archive's write failing at every point around each buffer, fails, leaves
// nothing, and leaks no goroutine.
func TestAttackInlineDiskFullEveryBuffer(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), randomData(20<<10+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refData := acRefData(t, dir)
	before := runtime.NumGoroutine()
	for _, short := range []bool{false, true} {
		for _, limit := range []int64{0, 1, writeBuffer - 1, writeBuffer, writeBuffer + 1, 2*writeBuffer + 7, 3 * writeBuffer, 3*writeBuffer + 12345} {
			t.Run(fmt.Sprint(short, limit), func(t *testing.T) {
				_, r := acRefCopy(t, refData)
				defer r.Close()
				out := func(f *os.File) io.Writer { return &attackFailAfter{w: f, limit: limit, short: short} }
				run := acReuse(t, t.Context(), dir, Options{Jobs: 1, Reference: r, Output: out})
				if run.err == nil {
					t.Fatalf("run succeeded with its writes failing after %d bytes", limit)
				}
				want := error(syscall.ENOSPC)
				if short {
					want = io.ErrShortWrite
				}
				if !errors.Is(run.err, want) {
					t.Errorf("run failed with %v, want %v", run.err, want)
				}
			})
		}
	}
	time.Sleep(200 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// TestAttackInlineCancel (held): cancelling the run while the writing goroutine copies
// entries inline: the run stops, leaves nothing and does not hang.
func TestAttackInlineCancel(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), randomData(20<<10+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refData := acRefData(t, dir)
	for _, at := range []int64{1, writeBuffer / 2, writeBuffer + 3, 3 * writeBuffer} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			_, r := acRefCopy(t, refData)
			defer r.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			out := func(f *os.File) io.Writer { return &acTrigger{w: f, at: at, f: cancel} }
			run := acReuse(t, ctx, dir, Options{Jobs: 2, Reference: r, Output: out})
			if run.err == nil {
				t.Fatalf("run succeeded though cancelled")
			}
		})
	}
}

// TestAttackInlineTruncatedEverywhere (held): the reference cut short at many points of a
// small tree (empty files, an entry of exactly inlineMax bytes, entries straddling the
// window's end): every run succeeds, byte for byte the reread run's archive, each file
// there.
func TestAttackInlineTruncatedEverywhere(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"a-empty": nil, "b-exact": randomData(inlineMax), "c-small": randomData(100),
		"d-mid": randomData(200 << 10), "e-empty": nil, "f-straddle": randomData(60 << 10), "g-last": randomData(7)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refData := acRefData(t, dir)
	reread := acReread(t, dir)
	for cut := int64(0); cut < int64(len(refData)); cut += int64(len(refData)) / 37 {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			path, r := acRefCopy(t, refData)
			defer r.Close()
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			run := acReuseOK(t, dir, Options{Jobs: 1, Reference: r})
			acCheck(t, run.path, dir)
			acSame(t, run.path, reread)
		})
	}
}
