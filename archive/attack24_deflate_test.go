package archive

import (
	"archive/zip"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestAttack24ManifestHeaderFailLeaksPool shows that a failed write of the manifest's local
// header leaves the manifest's deflate pool running: CreateHeader starts the pool
// (newChunkWriter, one worker per job) before it writes the local header, and when that
// write fails (the disk fills up just as the header is flushed out of the zipWriter's
// buffer) it returns the error without stopping the pool and without setting z.open, so
// abort (what Writer.Abort calls) does not stop it either. The workers wait on the pool's
// work channel for ever: a goroutine leak, against the claim that abort stops the pool
// and nothing leaks.
func TestAttack24ManifestHeaderFailLeaksPool(t *testing.T) {
	files := filesPool(t, 4)
	before := runtime.NumGoroutine()
	// An output that takes nothing: the zipWriter's 4 KiB buffer holds the first entry,
	// and the manifest's local header is the write that makes it flush, and fail.
	z := newZipWriter(&failAfter{n: 0}, t.TempDir(), files)
	fh := &zip.FileHeader{Name: "a", Method: zip.Store}
	w, err := z.CreateRaw(fh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 4096-30-1-10)); err != nil {
		t.Fatal(err)
	}
	mh := &zip.FileHeader{Name: ".backup-manifest.json", Method: zip.Deflate, Modified: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)}
	if _, err := z.CreateHeader(mh); !errors.Is(err, errFull) {
		t.Fatalf("CreateHeader: %v; want the write's error, %v", err, errFull)
	}
	z.abort() // as Writer.Abort does after the failed CloseManifest
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left after the failed manifest header and abort, %d before (the manifest pool's workers)", n, before)
	}
}
