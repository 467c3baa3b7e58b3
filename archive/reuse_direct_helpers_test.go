package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"backup/format"
)

// Attack tests of 4644d97: reused entries too large to hold, copied into the archive by
// their worker when their turn comes, and taken back when they do not match.

type acRun struct {
	path  string
	files []format.File
	warns []error
	err   error
}

// acTree makes a tree of large random files (deflate cannot shrink them: compressed size
// above the spool limit) interleaved with small ones.
func acTree(t *testing.T, large, small int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range large {
		if err := os.WriteFile(filepath.Join(dir, acLarge(i)), randomData(1<<20+300_000+i*1000), 0o644); err != nil {
			t.Fatal(err)
		}
		for j := range small {
			name := filepath.Join(dir, fmt.Sprintf("f%02d-small%d", i, j))
			if err := os.WriteFile(name, []byte(strings.Repeat(fmt.Sprint(i, j), 100+j)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func acLarge(i int) string { return fmt.Sprintf("f%02d-large", i) }

// acRefData is the bytes of dir's archive, for each subtest to damage a copy of its own.
func acRefData(t *testing.T, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(refArchive(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// acReread is the archive of dir by a run without a reference: a reusing run's archive must
// be the same to the byte, whatever it took back.
func acReread(t *testing.T, dir string) string {
	t.Helper()
	r := acArchive(t, t.Context(), dir, Options{Jobs: 2})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
}

// acRefCopy writes refData to a new file and opens it as a reference: the caller damages its
// copy after the pass over it, as a reference changed under a run would be, and closes r.
func acRefCopy(t *testing.T, refData []byte) (path string, r *Reference) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "ref.zip")
	if err := os.WriteFile(path, refData, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := openRef(t, path, DefaultLevel)
	if err != nil {
		t.Fatal(err)
	}
	return path, r
}

// acReuse is acArchive that fails the test, with every goroutine's stack, instead of
// hanging it when the run waits for ever. A run takes a second or two; under -race on two
// busy cores TestAttackCopyBudgetSpent's took 22 s, which 20 s took for a hang.
func acReuse(t *testing.T, ctx context.Context, dir string, opts Options) acRun {
	t.Helper()
	var run acRun
	acWithin(t, 2*time.Minute, func() { run = acArchive(t, ctx, dir, opts) })
	return run
}

// acReuseOK is acReuse for a run that must succeed.
func acReuseOK(t *testing.T, dir string, opts Options) acRun {
	t.Helper()
	run := acReuse(t, t.Context(), dir, opts)
	if run.err != nil {
		t.Fatal(run.err)
	}
	return run
}

// acArchive archives dir into a new folder, with opts (method, level and hooks set here), and
// returns what happened instead of failing.
func acArchive(t *testing.T, ctx context.Context, dir string, opts Options) acRun {
	t.Helper()
	var r acRun
	var mu sync.Mutex
	out := t.TempDir()
	opts.Method, opts.Level = format.Deflate, DefaultLevel
	onFile := opts.OnFile
	opts.OnFile = func(f format.File) {
		f.Reused = false // the manifests of a reusing run and a reread run compare equal
		r.files = append(r.files, f)
		if onFile != nil {
			onFile(f)
		}
	}
	opts.OnWarn = func(err error) { mu.Lock(); r.warns = append(r.warns, err); mu.Unlock() }
	w, err := Create(ctx, out, "a.zip", opts)
	if err != nil {
		t.Fatal(err)
	}
	r.err = addTreeMeta(ctx, w, dir)
	if r.err == nil {
		r.err = w.Wait()
	}
	if r.err == nil {
		_, r.err = w.CloseManifest(&format.Manifest{Status: "complete", Files: r.files})
	}
	if r.err != nil {
		w.Abort()
		acNoTemp(t, out)
		return r
	}
	r.path = filepath.Join(out, "a.zip")
	if err := w.Commit(r.path, false); err != nil {
		t.Fatal(err)
	}
	acNoTemp(t, out)
	return r
}

func acNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "a.zip" {
			t.Errorf("left behind in the output folder: %s", e.Name())
		}
	}
}

// acCheck checks the archive at path holds exactly the regular files of dir, byte for byte,
// through Go's zip reader, unzip -t and Verify.
func acCheck(t *testing.T, path, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("zip reader: %v", err)
	}
	defer zr.Close()
	seen := map[string]bool{}
	for _, f := range zr.File {
		if f.Name == format.ManifestName {
			continue
		}
		seen[f.Name] = true
		rc, err := f.Open()
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		want, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: archived bytes differ from the file's", f.Name)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() && !seen[e.Name()] {
			t.Errorf("%s: not in the archive", e.Name())
		}
	}
	if out, err := exec.Command("unzip", "-tq", path).CombinedOutput(); err != nil {
		t.Errorf("unzip -t: %v\n%s", err, out)
	}
	res, err := Verify(t.Context(), path, VerifyOptions{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(res.Problems) != 0 {
		t.Errorf("verify: %v", res.Problems)
	}
}

// acSame says whether two archives hold the same bytes before their manifests (the manifests
// differ only by what OnFile heard, which acArchive makes the same too).
func acSame(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(da, db) {
		n := 0
		for n < min(len(da), len(db)) && da[n] == db[n] {
			n++
		}
		t.Errorf("the reusing run's archive (%d bytes) differs from the reread run's (%d bytes) from byte %d", len(da), len(db), n)
	}
}

// acRefEntries is where each large entry's compressed bytes are in the reference.
func acRefEntries(t *testing.T, path string) map[string][2]int64 {
	t.Helper()
	m := inlineEntries(t, path)
	maps.DeleteFunc(m, func(_ string, at [2]int64) bool { return at[1] <= chunkSize })
	return m
}

// acFlipLarge flips a byte of each large entry numbered in which, at(size) into its
// compressed bytes, and returns the entries' names.
func acFlipLarge(t *testing.T, path string, at func(size int64) int64, which ...int) map[string]bool {
	t.Helper()
	ents := acRefEntries(t, path)
	names := map[string]bool{}
	for _, i := range which {
		e, ok := ents[acLarge(i)]
		if !ok {
			t.Fatalf("no entry %s in the reference", acLarge(i))
		}
		acFlip(t, path, e[0]+at(e[1]))
		names[acLarge(i)] = true
	}
	return names
}

func acFlip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func acWithin(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		buf = buf[:runtimeStack(buf)]
		t.Fatalf("hung for %v:\n%s", d, buf)
	}
}

func acReuseWarnings(r acRun) int {
	n := 0
	for _, w := range r.warns {
		if strings.Contains(w.Error(), format.OpReuse) {
			n++
		}
	}
	return n
}

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

var errAC = errors.New("attack")

func runtimeStack(buf []byte) int { return runtime.Stack(buf, true) }
