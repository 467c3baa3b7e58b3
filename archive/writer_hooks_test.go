package archive

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"backup/format"
	"backup/skiprules"
)

// hookLog records what a Writer told its hooks, in order.
type hookLog []string

func (l *hookLog) options(level int) Options {
	return Options{
		Level:  level,
		Jobs:   4,
		OnFile: func(f format.File) { *l = append(*l, fmt.Sprintf("file %s %d", f.Path, f.Size)) },
		OnSkip: func(name string, kind skiprules.Kind) { *l = append(*l, "skip "+name+" "+string(kind)) },
		OnWarn: func(err error) {
			var pe *fs.PathError
			errors.As(err, &pe)
			*l = append(*l, fmt.Sprintf("warn %s %s vanished=%v", pe.Path, pe.Op, errors.Is(err, fs.ErrNotExist)))
		},
	}
}

// TestWriterPathChangedSinceWalk adds paths that are no longer what the walk saw: a file
// that vanished, a FIFO and a symlink swapped in. Nothing blocks, nothing is followed, and
// each is told through the right hook, in order.
func TestWriterPathChangedSinceWalk(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	names := []string{"a", "gone", "fifo", "link"}
	for _, name := range names {
		os.WriteFile(filepath.Join(src, name), []byte("aaa"), 0o644)
	}
	held := heldFiles(t, src)
	// After the walk: gone vanishes, fifo and link are replaced by a FIFO and a symlink.
	for _, name := range names[1:] {
		os.Remove(filepath.Join(src, name))
	}
	syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644)
	os.Symlink("a", filepath.Join(src, "link"))

	var log hookLog
	w, err := Create(context.Background(), dir, "out.zip", log.options(DefaultLevel))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "fifo", "gone", "link"} {
		if err := w.AddFile(held[name].src, "src/"+name, held[name].info, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "out.zip")
	if err := w.Commit(final, false); err != nil {
		t.Fatal(err)
	}
	want := hookLog{"file src/a 3", "skip src/fifo fifo", "warn src/gone open vanished=true", "skip src/link symlink"}
	if !slices.Equal(log, want) {
		t.Errorf("hooks\n%q\nwant\n%q", log, want)
	}
	zr, err := zip.OpenReader(final)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var entries []string
	for _, f := range zr.File {
		entries = append(entries, f.Name)
	}
	if !slices.Equal(entries, []string{"src/a", format.ManifestName}) {
		t.Errorf("entries %q", entries)
	}
}

// TestWriterAbort leaves nothing behind, and Commit never replaces an existing file unless
// asked to.
func TestWriterAbortAndNoReplace(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.zip")
	os.WriteFile(final, []byte("old"), 0o644)
	var log hookLog
	w, err := Create(context.Background(), dir, "out.zip", log.options(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(final, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Commit over an existing file: %v, want ErrExist", err)
	}
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if got, _ := os.ReadFile(final); string(got) != "old" {
		t.Errorf("existing file now %q", got)
	}
}
