package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"backup/format"
)

// written is what the hooks were told while an archive was written.
type written struct {
	files map[string][sha256.Size]byte
	warns []error
}

// writeArchive archives every regular file below dir, in walk order, and returns the
// archive's path and what the hooks were told.
func writeArchive(t *testing.T, dir string, opts Options) (string, written) {
	t.Helper()
	got := written{files: map[string][sha256.Size]byte{}}
	opts.OnFile = func(f format.File) {
		got.files[f.Path] = f.SHA256
	}
	opts.OnWarn = func(err error) { got.warns = append(got.warns, err) }
	out := t.TempDir()
	w, err := Create(t.Context(), out, "test.zip", opts)
	if err != nil {
		t.Fatal(err)
	}
	addTree(t, w, dir)
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "test.zip")
	if err := w.Commit(path, false); err != nil {
		t.Fatal(err)
	}
	return path, got
}

// readArchive reads every entry but the manifest with Go's reader, checking its CRC.
func readArchive(t *testing.T, path string) (map[string][]byte, map[string]uint16) {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Deflate stays with the standard library's reader: it must read our chunked streams.
	r.RegisterDecompressor(MethodZstd, zstd.ZipDecompressor())
	data, methods := map[string][]byte{}, map[string]uint16{}
	for _, f := range r.File {
		if f.Name == format.ManifestName {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(rc) // checks the CRC-32 at the end
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		data[f.Name], methods[f.Name] = b, f.Method
	}
	return data, methods
}

// unzipTest runs Info-ZIP's unzip -t on the archive.
func unzipTest(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("unzip"); err != nil {
		t.Skip("unzip not installed")
	}
	if out, err := exec.Command("unzip", "-tqq", path).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t %s: %v\n%s", path, err, out)
	}
}

// pythonTest reads every entry with Python's zipfile, which checks the CRC-32s.
func pythonTest(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	script := "import sys, zipfile\nbad = zipfile.ZipFile(sys.argv[1]).testzip()\nsys.exit(bad and 'bad entry: ' + bad)"
	if out, err := exec.Command("python3", "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("python zipfile %s: %v\n%s", path, err, out)
	}
}

func TestRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 100, trialSize + 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 17}
	files := map[string][]byte{}
	for _, n := range sizes {
		files["text/"+strconv.Itoa(n)] = textData(n)
		files["random/"+strconv.Itoa(n)] = randomData(n)
	}
	files["text/zeros"] = make([]byte, 2*chunkSize+5)
	files["text/looks-compressed.jpg"] = textData(5000)
	files["random/video.mp4"] = randomData(2*chunkSize + 3)
	files["mixed/random-then-text"] = append(randomData(chunkSize+5), textData(2*chunkSize)...)
	dir := t.TempDir()
	writeTree(t, dir, files)
	cases := []struct {
		name   string
		opts   Options
		method uint16 // of compressible files
		others bool   // whether unzip and Python read this method
	}{
		{"store", Options{Level: 0}, zip.Store, true},
		{"deflate-1", Options{Level: 1}, zip.Deflate, true},
		{"deflate-default", Options{Level: DefaultLevel}, zip.Deflate, true},
		{"deflate-9", Options{Level: 9, Jobs: 3}, zip.Deflate, true},
		{"zstd", Options{Level: DefaultLevel, Method: format.Zstd}, MethodZstd, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, hooks := writeArchive(t, dir, c.opts)
			if len(hooks.warns) > 0 {
				t.Fatalf("warnings: %v", hooks.warns)
			}
			data, methods := readArchive(t, path)
			if len(data) != len(files) {
				t.Errorf("got %d entries, want %d", len(data), len(files))
			}
			for name, want := range files {
				if !bytes.Equal(data[name], want) {
					t.Errorf("%s: content differs after the round trip (%d bytes, want %d)", name, len(data[name]), len(want))
				}
				if hooks.files[name] != sha256.Sum256(want) {
					t.Errorf("%s: OnFile told a wrong SHA-256", name)
				}
				if got, want := methods[name], wantMethod(name, want, c.method); got != want && want != anyMethod {
					t.Errorf("%s: method %d, want %d", name, got, want)
				}
			}
			if c.others {
				unzipTest(t, path)
				pythonTest(t, path)
			}
		})
	}
}

// wantMethod is the method the store decision should pick: random data and empty files are
// stored, text is compressed, and for a few bytes of text either is right. A file of a
// chunk or more is compressed chunk by chunk, random data in stored blocks.
func wantMethod(name string, data []byte, compressed uint16) uint16 {
	switch {
	case len(data) >= chunkSize:
		return compressed
	case strings.HasPrefix(name, "random/") || len(data) == 0:
		return zip.Store
	case len(data) < 1000:
		return anyMethod
	}
	return compressed
}

const anyMethod = 0xffff

func TestSameBytesWhateverTheJobs(t *testing.T) {
	files := smallTree(300, 3000)
	files["big/log"] = textData(5*chunkSize + 3)
	files["big/random"] = randomData(2*chunkSize + 1)
	dir := t.TempDir()
	writeTree(t, dir, files)
	for _, method := range []format.Method{format.Deflate, format.Zstd} {
		t.Run(string(method), func(t *testing.T) {
			var first []byte
			for _, jobs := range []int{1, 8} {
				path, _ := writeArchive(t, dir, Options{Level: DefaultLevel, Method: method, Jobs: jobs})
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = b
				} else if !bytes.Equal(b, first) {
					t.Errorf("--jobs %d wrote different bytes than --jobs 1", jobs)
				}
			}
		})
	}
}

func TestCreateRejectsBadOptions(t *testing.T) {
	for _, opts := range []Options{{Level: 10}, {Level: -1}, {Method: "lzma", Level: 1}} {
		if w, err := Create(context.Background(), t.TempDir(), "x.zip", opts); err == nil {
			w.Abort()
			t.Errorf("Create(%+v) succeeded, want an error", opts)
		}
	}
}

// TestChunkByChunk: a large file is compressed where it can be: random parts cost only the
// stored blocks' headers (5 bytes per block of up to 64 KiB, plus a sync flush per chunk),
// the text after them is compressed as well as when it stands alone. Before, the trial on the
// file's start stored the whole file.
func TestChunkByChunk(t *testing.T) {
	random, text := randomData(chunkSize+5), textData(3*chunkSize)
	files := map[string][]byte{
		"random": randomData(3*chunkSize + 5),
		"text":   text,
		"mixed":  append(append([]byte{}, random...), text...),
	}
	dir := t.TempDir()
	writeTree(t, dir, files)
	for _, level := range []int{1, DefaultLevel, 9} {
		t.Run(strconv.Itoa(level), func(t *testing.T) {
			path, _ := writeArchive(t, dir, Options{Level: level})
			sizes := compressedSizes(t, path)
			stored := func(n int) int64 { return int64(n + n/4096) }
			if got, most := sizes["random"], stored(len(files["random"])); got > most {
				t.Errorf("random: %d bytes compressed, want at most %d", got, most)
			}
			if got, most := sizes["mixed"], stored(len(random))+sizes["text"]*101/100; got > most {
				t.Errorf("random then text: %d bytes compressed, want at most %d (the random part stored, the text as compressed as alone: %d)",
					got, most, sizes["text"])
			}
			unzipTest(t, path)
		})
	}
}

// compressedSizes maps each file entry's base name to its compressed size.
func compressedSizes(t *testing.T, path string) map[string]int64 {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sizes := map[string]int64{}
	for _, f := range r.File {
		sizes[pathpkg.Base(f.Name)] = int64(f.CompressedSize64)
	}
	return sizes
}
