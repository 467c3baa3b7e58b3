package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"backup/archive"
)

// TestMergeInArchiveOrder: what the workers report is put back in archive order, whichever
// worker met which entry, and the error is the earliest entry's.
func TestMergeInArchiveOrder(t *testing.T) {
	p := &Plan{entries: []*archive.Entry{{Name: "a"}, {Name: "b", IsDir: true}, {Name: "c"}, {Name: "d"}},
		linked: map[int][]string{1: {"d", "a"}}}
	p.warnings = []archive.Problem{{Entry: "plan"}, {Entry: "d"}, {Entry: "a"}}
	full, late := errors.New("disk full"), errors.New("later")
	parts := []*workResult{
		{res: Result{Files: 1, Damaged: []archive.Problem{{Entry: "d"}}, Failed: []archive.Problem{{Entry: "c"}}}, err: late, errIndex: 3},
		{res: Result{Files: 2, Dirs: 1, Damaged: []archive.Problem{{Entry: "a"}}, Failed: []archive.Problem{{Entry: "b/"}}}, err: full, errIndex: 2},
	}
	res := &Result{Damaged: []archive.Problem{{Entry: "z, from the plan"}}}
	err := p.merge(res, parts, 1)
	names := func(ps []archive.Problem) (out []string) {
		for _, p := range ps {
			out = append(out, p.Entry)
		}
		return out
	}
	if got, want := names(res.Damaged), []string{"z, from the plan", "a", "d"}; !slices.Equal(got, want) {
		t.Errorf("damaged %q, want %q", got, want)
	}
	if got, want := names(res.Failed), []string{"b/", "c"}; !slices.Equal(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got, want := names(p.warnings), []string{"plan", "a", "d"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if got := p.linked[1]; !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("link group %q, want a, d", got)
	}
	if res.Files != 3 || res.Dirs != 1 || err != full {
		t.Errorf("files %d dirs %d error %v, want 3, 1, the earliest entry's", res.Files, res.Dirs, err)
	}
}

// TestRunInterruptedParallel: workers stopped part way (ctx done after some checks) leave
// exactly the files Result counts in place, and no temp file.
func TestRunInterruptedParallel(t *testing.T) {
	var entries []zent
	for i := range 40 {
		entries = append(entries, zent{name: fmt.Sprintf("d%d/f%02d", i%4, i), body: strings.Repeat("x", i*100)})
	}
	r := openZip(t, buildZip(t, entries, true))
	dest := t.TempDir()
	plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &countdownCtx{Context: t.Context()}
	ctx.left.Store(30)
	res, err := plan.Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	files := 0
	for _, name := range listTree(t, dest) {
		if strings.Contains(name, ".restore-") {
			t.Errorf("temp file %s left", name)
		}
		if !strings.HasSuffix(name, "/") {
			files++
		}
	}
	if files != res.Files || files == 0 || files == 40 {
		t.Errorf("%d files in place, Result counts %d; want the same, some but not all", files, res.Files)
	}
}

// countingReaderAt counts the reads of an archive, once armed.
type countingReaderAt struct {
	io.ReaderAt
	armed atomic.Bool
	reads atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.armed.Load() {
		c.reads.Add(1)
	}
	return c.ReaderAt.ReadAt(p, off)
}

// TestRestoreReadsFewTimes: the plan checks, and the workers read, neighbouring small
// entries a span at a time, not with a read or more each; what lands in DEST is the same.
func TestRestoreReadsFewTimes(t *testing.T) {
	var entries []zent
	for i := range 1000 {
		entries = append(entries, zent{name: fmt.Sprintf("d%d/f%d", i/100, i), body: strings.Repeat("data ", 1+i%200)})
	}
	data := buildZip(t, entries, true)
	for _, jobs := range []int{1, 4} {
		src := &countingReaderAt{ReaderAt: bytes.NewReader(data)}
		r, err := archive.NewReader(src, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		src.armed.Store(true)
		dest := filepath.Join(t.TempDir(), "dest")
		plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		planned := src.reads.Load()
		res, err := plan.Run(t.Context())
		if err != nil || res.Files != len(entries) {
			t.Fatalf("jobs %d: Run: %v, %d files of %d", jobs, err, res.Files, len(entries))
		}
		spans := int64(len(data)/(128<<10) + 2)
		if run := src.reads.Load() - planned; planned > spans || run > spans+int64(jobs) {
			t.Errorf("jobs %d: %d reads to plan and %d to restore %d entries of %d bytes in all", jobs, planned, run, len(entries), len(data))
		}
		for _, e := range entries[:5] {
			if got := string(readTestFile(t, filepath.Join(dest, e.name))); got != e.body {
				t.Errorf("jobs %d: %s holds %q, want %q", jobs, e.name, got, e.body)
			}
		}
	}
}
