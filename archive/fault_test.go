package archive_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"backup/archive"
	"backup/format"
	"backup/report"
	"backup/walker"
)

// TestReadErrorDropsTheEntry injects a read error part-way through one file: a small one,
// and a large one split into chunks compressed in parallel. The file must be left out whole,
// reported as a lost read, and every other file archived intact.
func TestReadErrorDropsTheEntry(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name       string
		size, good int64
	}{
		{"small file", 300 << 10, 100 << 10},
		{"large file, third chunk", 6 * mib, 2*mib + 12345},
		{"large file, at a chunk boundary", 4 * mib, 3 * mib},
		{"large file, last byte", 3*mib + 1, 3 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			contents := map[string][]byte{
				"a.txt":   bytes.Repeat([]byte("before the bad file\n"), 5000),
				"bad.log": bytes.Repeat([]byte("log line that compresses\n"), int(c.size)/25+1)[:c.size],
				"c.bin":   randomBytes(t, 3*mib),
				"d.txt":   bytes.Repeat([]byte("after the bad file\n"), 200000),
			}
			for name, data := range contents {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			open := func(src walker.Handle, name string) (archive.SourceFile, error) {
				f, err := src.Open()
				if err != nil || name != "bad.log" {
					return f, err
				}
				return &archive.FailingSource{SourceFile: f, Good: c.good}, nil
			}
			rec := report.NewRecorder(report.Policy{})
			path := archiveFiles(t, dir, []string{"a.txt", "bad.log", "c.bin", "d.txt"}, archive.Options{
				Level: archive.DefaultLevel, Jobs: 2, Open: open, OnFile: rec.File, OnWarn: rec.Warn,
			})
			if got := rec.Status(); got != format.Incomplete {
				t.Errorf("status %s, want %s", got, format.Incomplete)
			}
			warnings := rec.Manifest("test").Warnings
			if len(warnings) != 1 || warnings[0].Path != "bad.log" || warnings[0].Op != format.OpRead || !warnings[0].Lost {
				t.Errorf("warnings %+v, want one lost read of bad.log", warnings)
			}
			delete(contents, "bad.log")
			checkEntries(t, path, contents)
		})
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// archiveFiles archives the named files of dir, in that order, and returns the archive.
func archiveFiles(t *testing.T, dir string, names []string, opts archive.Options) string {
	t.Helper()
	out := t.TempDir()
	w, err := archive.Create(t.Context(), out, "t.zip", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	// The walk holds each file; they are added in the order given, as the walk would.
	type held struct {
		src  walker.Handle
		info fs.FileInfo
	}
	files := map[string]held{}
	walk := walker.Walker{Visit: func(e walker.Entry) error {
		if e.Info.Mode().IsRegular() {
			files[e.Rel] = held{e.Hold(), e.Info}
		}
		return nil
	}}
	if err := walk.Walk(t.Context(), dir, "."); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := w.AddFile(files[name].src, name, files[name].info, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(out, "t.zip")
	if err := w.Commit(final, false); err != nil {
		t.Fatal(err)
	}
	return final
}

// checkEntries checks that the archive holds exactly want, besides the manifest.
func checkEntries(t *testing.T, path string, want map[string][]byte) {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := 0
	for _, f := range r.File {
		if f.Name == format.ManifestName {
			continue
		}
		seen++
		data, err := readEntry(f)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
		} else if w, ok := want[f.Name]; !ok || !bytes.Equal(data, w) {
			t.Errorf("%s: unexpected entry or content (%d bytes)", f.Name, len(data))
		}
	}
	if seen != len(want) {
		t.Errorf("got %d entries, want %d", seen, len(want))
	}
}

func readEntry(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func TestOpenErrorIsReported(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(walker.Handle, string) (archive.SourceFile, error) { return nil, syscall.EACCES }
	var warns []error
	path := archiveFiles(t, dir, []string{"f"}, archive.Options{Level: 1, Open: open, OnWarn: func(err error) { warns = append(warns, err) }})
	var pe *fs.PathError
	if len(warns) != 1 || !errors.As(warns[0], &pe) || pe.Op != format.OpOpen || !errors.Is(pe, syscall.EACCES) {
		t.Errorf("warnings %v, want one open error with EACCES", warns)
	}
	checkEntries(t, path, map[string][]byte{})
}
