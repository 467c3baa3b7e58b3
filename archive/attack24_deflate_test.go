package archive

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"backup/format"
)

// TestAttack24ManifestHeaderFailLeaksPool (attack pass 24): a failed write of the manifest's
// local header leaves no deflate pool running. CreateHeader started the pool before writing
// the header, and on that write's failure returned without setting z.open, so abort (what
// Writer.Abort calls) did not stop its workers.
func TestAttack24ManifestHeaderFailLeaksPool(t *testing.T) {
	files := filesPool(t, 4)
	before := runtime.NumGoroutine()
	// An output that takes the first entry and nothing more: the manifest's local header is
	// the write that fails.
	const data = 4000
	z := newZipWriter(&failAfter{n: 30 + 1 + data}, t.TempDir(), files)
	fh := &zip.FileHeader{Name: "a", Method: zip.Store}
	w, err := z.CreateRaw(fh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, data)); err != nil {
		t.Fatal(err)
	}
	mh := &zip.FileHeader{Name: ".backup-manifest.json", Method: zip.Deflate, Modified: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)}
	if _, err := z.CreateHeader(mh); !errors.Is(err, errFull) {
		t.Fatalf("CreateHeader: %v; want the write's error, %v", err, errFull)
	}
	z.abort() // as Writer.Abort does after the failed CloseManifest
	waitGoroutines(t, before)
}

// TestAttack24CloseManifestFailLeaksPool is the same through the Writer, as a run met it: an
// output that takes nothing (a full disk, a closed pipe), with entries the Writer's buffer
// kept until the manifest's local header was the write that filled it. CloseManifest fails
// with the output's error and Abort leaves no worker behind. The sizes are swept, for the
// header to meet the buffer's end.
func TestAttack24CloseManifestFailLeaksPool(t *testing.T) {
	dir := t.TempDir()
	const first = writeBuffer - 3000
	os.WriteFile(filepath.Join(dir, "a"), bytes.Repeat([]byte{'a'}, first), 0o644)
	for s := 3700; s < 4096; s++ {
		os.WriteFile(filepath.Join(dir, "b"), bytes.Repeat([]byte{'b'}, s), 0o644)
		files := heldFiles(t, dir)
		before := runtime.NumGoroutine()
		w, err := CreateStream(t.Context(), &failAfter{n: 0}, t.TempDir(), Options{Level: 0, Jobs: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			if err := w.AddFile(files[name].src, name, files[name].info, nil); err != nil {
				t.Fatal(err)
			}
		}
		m := &format.Manifest{Schema: format.ManifestSchema, Status: "complete"}
		_, err = w.CloseManifest(m)
		w.Abort()
		if err == nil {
			t.Fatalf("size %d: CloseManifest to an output that takes nothing succeeded", s)
		}
		waitGoroutines(t, before)
	}
}
