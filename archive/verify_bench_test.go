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

// BenchmarkVerify verifies archives that Writer made, of small files, of a few large ones
// and of small files with a large one last, with one worker and with one per CPU: the ratio
// of the two is what reading entries in parallel gains. The one-by-one runs hand the
// entries out one at a time in archive order, as before batches and large entries first
// (verify_batch.go, verify_early.go). Set BACKUP_BENCH_ZIP to an archive to verify that
// instead (with -cpuprofile, to see where the time goes on a real archive).
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
		last := smallTree(4000, 4096)
		last["zz/last.log"] = textData(24 << 20)
		archives = append(archives,
			benchZip{"small-files", benchArchive(b, smallTree(2000, 2048))},
			benchZip{"large-files", benchArchive(b, large)},
			benchZip{"large-last", benchArchive(b, last)})
	}
	for _, a := range archives {
		for _, jobs := range []int{1, runtime.NumCPU()} {
			for _, oneByOne := range []bool{false, true} {
				name := a.name + "/jobs-" + strconv.Itoa(jobs)
				if oneByOne {
					name += "-one-by-one"
				}
				b.Run(name, func(b *testing.B) {
					benchVerify(b, a.path, VerifyOptions{Jobs: jobs, oneByOne: oneByOne})
				})
			}
		}
	}
}

func benchVerify(b *testing.B, path string, opts VerifyOptions) {
	for range b.N {
		res, err := Verify(context.Background(), path, opts)
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
