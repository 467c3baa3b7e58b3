package main

import (
	"archive/zip"
	"bytes"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backup/archive"
	"backup/format"
)

// slowString is n bytes of random hex: compressible, so it is deflated rather than stored,
// and slow to deflate at level 9, which has few repeats to find. Tests that need a run to
// take a while (to interrupt it, or to find its lock held) use it; random bytes would be
// stored after a trial, in a moment.
func slowString(t *testing.T, n int) string {
	t.Helper()
	return hex.EncodeToString([]byte(randomString(t, n/2)))
}

// speedTree is a tree with many small files and two large ones, big enough to be split into
// chunks compressed in parallel: one compressible, one random.
func speedTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	files := map[string][]byte{}
	for i := range 200 {
		files[filepath.Join("app", "src", string(rune('a'+i%26)), "f"+string(rune('a'+i/26))+".txt")] =
			bytes.Repeat([]byte("line of text "), 20+r.IntN(300))
	}
	var log bytes.Buffer
	for log.Len() < 5<<20 {
		log.WriteString("2026-01-01T00:00:00Z GET /api/items status=200 dur=")
		log.WriteString(strings.Repeat("7", 1+r.IntN(5)))
		log.WriteString("ms\n")
	}
	files["app/var/app.log"] = log.Bytes()
	random := make([]byte, 3<<20+7)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	files["app/var/blob.bin"] = random
	for name, data := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestCreateSameArchiveForAnyJobs writes the same bytes with 1 and 8 jobs, stored symlinks
// and hard links included: they are written in walk order like files.
func TestCreateSameArchiveForAnyJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	speedTree(t, dir)
	for _, l := range [][2]string{{"var/app.log", "app/a-link"}, {"var", "app/z-dir-link"}, {"/", "app/var/root"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "app/var/app.log"), filepath.Join(dir, "app/app.log")); err != nil {
		t.Fatal(err)
	}
	var archives [][]byte
	for _, jobs := range []string{"1", "8"} {
		out := filepath.Join(t.TempDir(), "app.zip")
		if r := backup(t, runOpts{dir: dir}, "create", "-q", "--symlinks", "store", "--jobs", jobs, "-o", out, "app"); r.code != exitComplete {
			t.Fatalf("--jobs %s: exit %d: %s", jobs, r.code, r.stderr)
		}
		readZip(t, out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("--jobs 1 and --jobs 8 wrote different archives")
	}
}

func TestCreateStoresWhatDoesNotShrink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	speedTree(t, dir)
	out := filepath.Join(t.TempDir(), "app.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", out, "app"); r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	methods, sizes := map[string]uint16{}, map[string]*zip.FileHeader{}
	for _, f := range zr.File {
		methods[f.Name], sizes[f.Name] = f.Method, &f.FileHeader
	}
	// A file of more than a chunk (1 MiB) is compressed chunk by chunk; its random chunks
	// become stored deflate blocks, costing a few bytes of headers.
	if h := sizes["app/var/blob.bin"]; h == nil || h.CompressedSize64 > h.UncompressedSize64+h.UncompressedSize64/4096 {
		t.Errorf("random data: compressed %+v, want its size and a few headers", h)
	}
	if got := methods["app/var/app.log"]; got != zip.Deflate {
		t.Errorf("log: method %d, want deflate (8)", got)
	}
}

func TestCreateZstd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := speedTree(t, dir)
	out := filepath.Join(t.TempDir(), "app.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "--method", "zstd", "-o", out, "app"); r.code != exitComplete {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	archive.RegisterDecompressors(&zr.Reader)
	for _, f := range zr.File {
		if f.Name == format.ManifestName || strings.HasSuffix(f.Name, "/") {
			continue
		}
		// blob.bin's random data is in zstd's raw blocks, but zstd all the same
		if want := archive.MethodZstd; f.Method != want {
			t.Errorf("%s: method %d, want %d", f.Name, f.Method, want)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(data, files[filepath.FromSlash(f.Name)]) {
			t.Errorf("%s: read back %d bytes (%v), want %d", f.Name, len(data), err, len(files[f.Name]))
		}
	}
	if r := backup(t, runOpts{}, "verify", out); r.code != exitComplete {
		t.Errorf("backup verify of a zstd archive: exit %d: %s", r.code, r.stderr)
	}
	// Info-ZIP unzip 6.0 cannot read zstd entries, as docs/speed.md says; 7-Zip can.
	if err := exec.Command("unzip", "-tqq", out).Run(); err == nil {
		t.Error("unzip -t accepted zstd entries; docs/speed.md says Info-ZIP unzip 6.0 cannot read them")
	}
	if _, err := exec.LookPath("7z"); err == nil {
		if b, err := exec.Command("7z", "t", out).CombinedOutput(); err != nil {
			t.Errorf("7z t: %v\n%s", err, b)
		}
	}
}

func TestCreateBadMethod(t *testing.T) {
	t.Parallel()
	r := backup(t, runOpts{dir: t.TempDir()}, "create", "--method", "lzma", ".")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--method "lzma": must be deflate or zstd`) {
		t.Errorf("exit %d, stderr %q; want usage error naming --method", r.code, r.stderr)
	}
}
