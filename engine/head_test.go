package engine

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"backup/archive"
	"backup/walker"
)

// openEach opens every regular file below dir as a run with Options.SQLite does, and calls
// fn with its name and what opening it gave.
func openEach(t *testing.T, dir string, fn func(name string, f archive.SourceFile, err error)) {
	t.Helper()
	open := snapshotOpener(context.Background(), t.TempDir(), 0)
	w := walker.Walker{Visit: func(e walker.Entry) error {
		if !e.Info.Mode().IsRegular() {
			return nil
		}
		f, err := open(e.Hold(), e.Name)
		if f != nil {
			defer f.Close()
		}
		fn(e.Name, f, err)
		return nil
	}}
	if err := w.Walk(context.Background(), dir, "d"); err != nil {
		t.Fatal(err)
	}
}

// TestHeadReadOnce: the bytes read to look for a database are given first, and a file
// that fits the reader's buffer comes whole from its first Read, which is what spares the
// archive its reading the file again (archive.fill); a larger one reads on as it is read.
func TestHeadReadOnce(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 15, 16, 17, 4095, 4096, 4097, 100_000, 1<<20 - 1, 1 << 20, 1<<20 + 5, 3 << 20}
	want := map[string][]byte{}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		name := "f" + strconv.Itoa(n)
		want["d/"+name] = b
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 1<<20)
	seen := 0
	openEach(t, dir, func(name string, f archive.SourceFile, err error) {
		seen++
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := f.Read(buf)
		if len(want[name]) <= len(buf) && (n != len(want[name]) || err != nil && err != io.EOF) {
			t.Errorf("%s: first Read gave %d bytes, %v; want all %d", name, n, err, len(want[name]))
		}
		rest, err := io.ReadAll(f)
		if got := append(bytes.Clone(buf[:n]), rest...); err != nil || !bytes.Equal(got, want[name]) {
			t.Errorf("%s: read %d bytes, %v; want the file's %d", name, len(got), err, len(want[name]))
		}
	})
	if seen != len(sizes) {
		t.Errorf("opened %d files, want %d", seen, len(sizes))
	}
}

// TestHeadTellsDatabase: a file beginning like an SQLite database is one (its snapshot
// fails here, it is no database), whatever else it holds; 15 bytes of its header are not.
func TestHeadTellsDatabase(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "db"), []byte("SQLite format 3\x00 and no database"), 0o644)
	os.WriteFile(filepath.Join(dir, "short"), []byte("SQLite format 3"), 0o644)
	openEach(t, dir, func(name string, _ archive.SourceFile, err error) {
		if snapshotted := err != nil; snapshotted != (name == "d/db") {
			t.Errorf("%s: %v", name, err)
		}
	})
}
