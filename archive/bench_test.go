package archive

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
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
			benchWriter(b, dir, Options{Level: DefaultLevel, Method: Zstd})
		})
	}
}

func BenchmarkWriterDir(b *testing.B) {
	dir := os.Getenv("BACKUP_BENCH_DIR")
	if dir == "" {
		b.Skip("BACKUP_BENCH_DIR not set")
	}
	benchWriter(b, dir, Options{Level: benchLevel(), Method: Method(os.Getenv("BACKUP_BENCH_METHOD"))})
}

func benchWriter(b *testing.B, dir string, opts Options) {
	var size int64
	files := treeFiles(b, dir)
	for _, f := range files {
		size += f.info.Size()
	}
	b.SetBytes(size)
	out := b.TempDir()
	b.ResetTimer()
	for range b.N {
		w, err := Create(context.Background(), out, "bench.zip", opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range files {
			if err := w.AddFile(f.path, f.name, f.info); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.CloseManifest(&Manifest{}); err != nil {
			b.Fatal(err)
		}
		w.Abort()
	}
}

type treeFile struct {
	path, name string
	info       fs.FileInfo
}

func treeFiles(tb testing.TB, dir string) []treeFile {
	tb.Helper()
	var files []treeFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		rel, _ := filepath.Rel(dir, path)
		files = append(files, treeFile{path: path, name: filepath.ToSlash(rel), info: info})
		return err
	})
	if err != nil {
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
