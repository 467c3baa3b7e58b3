package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/flate"
)

// TestRunCompressesEveryChunk: every chunk of every file is in the output, deflated: the
// streams inflate back to the files' bytes, in some order.
func TestRunCompressesEveryChunk(t *testing.T) {
	tree := t.TempDir()
	large := bytes.Repeat([]byte("0123456789abcdef"), (2*chunkSize+100)/16)
	files := map[string][]byte{"a.txt": []byte("alpha"), "sub/b.txt": []byte("beta beta"), "sub/large": large}
	for name, data := range files {
		p := filepath.Join(tree, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := run(tree, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temp file is left: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var streams int
	var total int
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		n, err := io.Copy(io.Discard, flate.NewReader(r))
		if err != nil {
			t.Fatalf("stream %d: %v", streams, err)
		}
		streams++
		total += int(n)
	}
	if want := 2 + 3; streams != want || total != len(large)+len("alpha")+len("beta beta") {
		t.Errorf("%d streams of %d bytes; want %d of %d", streams, total, want, len(large)+14)
	}
}

func TestRunFailsOnAMissingTree(t *testing.T) {
	if err := run(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "out")); err == nil {
		t.Error("no error for a tree that does not exist")
	}
}
