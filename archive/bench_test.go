package archive

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"backup/format"
	"backup/walker"
)

// The benchmarks run the whole pipeline (read, hash, compress, stage, write in order) on
// trees made on disk, so that go test -bench shows a regression in any stage. Set
// BACKUP_BENCH_DIR to a tree to benchmark that instead (with -cpuprofile, to see where the
// time goes on a real corpus).

func BenchmarkWriter(b *testing.B) {
	cases := []struct {
		name  string
		files map[string][]byte
	}{
		{"small-files", smallTree(2000, 2048)},
		{"text-16MiB", map[string][]byte{"big.log": textData(16 << 20)}},
		{"random-16MiB", map[string][]byte{"random.dat": randomData(16 << 20)}},
	}
	for _, c := range cases {
		dir := b.TempDir()
		writeTree(b, dir, c.files)
		for _, level := range []int{1, DefaultLevel} {
			b.Run(c.name+"/level-"+strconv.Itoa(level), func(b *testing.B) {
				benchWriter(b, dir, Options{Level: level})
			})
		}
		b.Run(c.name+"/zstd", func(b *testing.B) {
			benchWriter(b, dir, Options{Level: DefaultLevel, Method: format.Zstd})
		})
	}
}

func BenchmarkWriterDir(b *testing.B) {
	dir := os.Getenv("BACKUP_BENCH_DIR")
	if dir == "" {
		b.Skip("BACKUP_BENCH_DIR not set")
	}
	benchWriter(b, dir, Options{Level: benchLevel(), Method: format.Method(os.Getenv("BACKUP_BENCH_METHOD"))})
}

// benchWriter times the walk too, as backup create runs it: the files are opened through
// the walker's Handles.
func benchWriter(b *testing.B, dir string, opts Options) {
	out := b.TempDir()
	b.ResetTimer()
	for range b.N {
		w, err := Create(context.Background(), out, "bench.zip", opts)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(addTree(b, w, dir))
		if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
			b.Fatal(err)
		}
		w.Abort()
	}
}

// addTree adds every regular file below dir to w, named by its path below dir, in walk
// order and through the walker's Handles, as backup create does. It returns their size.
func addTree(tb testing.TB, w *Writer, dir string) int64 {
	tb.Helper()
	var size int64
	walk := walker.Walker{Visit: func(e walker.Entry) error {
		if !e.Info.Mode().IsRegular() {
			return nil
		}
		size += e.Info.Size()
		return w.AddFile(e.Hold(), e.Rel, e.Info, nil)
	}}
	if err := walk.Walk(tb.Context(), dir, "."); err != nil {
		tb.Fatal(err)
	}
	return size
}

// heldFile is a file a walk met, to be added later.
type heldFile struct {
	src  walker.Handle
	info fs.FileInfo
}

// heldFiles walks dir and holds every regular file below it, by its path below dir. Each
// Handle goes to AddFile or is released.
func heldFiles(tb testing.TB, dir string) map[string]heldFile {
	tb.Helper()
	files := map[string]heldFile{}
	walk := walker.Walker{Visit: func(e walker.Entry) error {
		if e.Info.Mode().IsRegular() {
			files[e.Rel] = heldFile{src: e.Hold(), info: e.Info}
		}
		return nil
	}}
	if err := walk.Walk(tb.Context(), dir, "."); err != nil {
		tb.Fatal(err)
	}
	return files
}

func writeTree(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func smallTree(n, maxSize int) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	files := map[string][]byte{}
	for i := range n {
		files["d"+strconv.Itoa(i/100)+"/f"+strconv.Itoa(i)] = textData(1 + r.IntN(maxSize))
	}
	return files
}

// textData is n bytes of log-like text: compressible, but not trivially.
func textData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	words := []string{"GET", "POST", "/api/items", "/login", "status=200", "status=404", "user=", "alice", "bob", "dur=", "ms", "\n"}
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		b = strconv.AppendInt(b, int64(r.IntN(1000)), 10)
		b = append(b, ' ')
	}
	return b[:n]
}

func randomData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// benchLevel is BACKUP_BENCH_LEVEL, or the default level.
func benchLevel() int {
	if l, err := strconv.Atoi(os.Getenv("BACKUP_BENCH_LEVEL")); err == nil {
		return l
	}
	return DefaultLevel
}
