package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"backup/format"
)

// TestCacheWriter: a copy that could not be written whole (a full disk: here a closed file)
// is dropped with its temp file, and keep says why, whatever the upload beside it did; a copy
// whose bytes are not the receipt's is never kept; a good copy replaces the set's older one
// and the temp files of killed runs, and nothing else in the folder.
func TestCacheWriter(t *testing.T) {
	c := newSetCache(t.TempDir(), "http://x", "s3://b/p")
	if err := c.prepare(); err != nil {
		t.Fatal(err)
	}
	const name = "app-20260101T000000Z.zip"
	data := []byte("archive bytes")
	sum := sha256.Sum256(data)
	want := format.Summary{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}

	w := c.create(name)
	w.f.Close() // the next write fails
	if n, err := w.Write(data); n != len(data) || err != nil {
		t.Errorf("Write on a failing copy: %d, %v; want the upload's stream unharmed", n, err)
	}
	if err := w.keep(name, want); err == nil {
		t.Error("keep of a copy whose write failed: no error")
	}
	if got := c.archives(""); len(got) != 0 {
		t.Errorf("the failed copy left %q", got)
	}

	w = c.create(name)
	w.Write([]byte("other bytes!!"))
	if err := w.keep(name, want); err == nil {
		t.Error("keep of a copy that is not the archive: no error")
	}

	for _, f := range []string{"app-20251231T000000Z.zip", "." + name + ".tmp-123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(c.dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w = c.create(name)
	w.Write(data)
	if err := w.keep(name, want); err != nil {
		t.Fatal(err)
	}
	if got := c.archives(""); len(got) != 1 || got[0] != name {
		t.Errorf("after keep the folder holds the archives %q, want %s alone", got, name)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "notes.txt")); err != nil {
		t.Errorf("keep removed a file not its own: %v", err)
	}
}
