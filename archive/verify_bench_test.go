package archive

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"backup/format"
)

// BenchmarkVerify verifies archives that Writer made, of small files and of a few large
// ones, with one worker and with one per CPU: the ratio of the two is what reading entries
// in parallel gains. Set BACKUP_BENCH_ZIP to an archive to verify that instead (with
// -cpuprofile, to see where the time goes on a real archive).
func BenchmarkVerify(b *testing.B) {
	type benchZip struct{ name, path string }
	var archives []benchZip
	if path := os.Getenv("BACKUP_BENCH_ZIP"); path != "" {
		archives = append(archives, benchZip{filepath.Base(path), path})
	} else {
		large := map[string][]byte{}
		for i := range 4 {
			large["big"+strconv.Itoa(i)+".log"] = textData(4<<20 + i)
		}
		archives = append(archives,
			benchZip{"small-files", benchArchive(b, smallTree(2000, 2048))},
			benchZip{"large-files", benchArchive(b, large)})
	}
	for _, a := range archives {
		for _, jobs := range []int{1, runtime.NumCPU()} {
			b.Run(a.name+"/jobs-"+strconv.Itoa(jobs), func(b *testing.B) {
				benchVerify(b, a.path, jobs)
			})
		}
	}
}

func benchVerify(b *testing.B, path string, jobs int) {
	for range b.N {
		res, err := Verify(context.Background(), path, VerifyOptions{Jobs: jobs})
		if err != nil {
			b.Fatal(err)
		}
		if !res.OK() {
			b.Fatalf("problems: %q", problemStrings(res.Problems))
		}
		b.SetBytes(res.Bytes)
	}
}

// benchArchive writes files to disk and archives them at the default level, with a
// manifest, as backup create does.
func benchArchive(b *testing.B, files map[string][]byte) string {
	b.Helper()
	dir := b.TempDir()
	writeTree(b, dir, files)
	m := &format.Manifest{ToolVersion: "bench", Status: "complete", Files: []format.File{}, Skipped: []format.Skipped{},
		Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	w, err := Create(context.Background(), dir, "bench.zip", Options{Level: DefaultLevel,
		OnFile: func(f format.File) { m.Files = append(m.Files, f) }})
	if err != nil {
		b.Fatal(err)
	}
	addTree(b, w, dir)
	if _, err := w.CloseManifest(m); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "bench.zip")
	if err := w.Commit(path, false); err != nil {
		b.Fatal(err)
	}
	return path
}
