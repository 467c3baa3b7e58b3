package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// The zip64 tests are slow (tens of seconds each): go test -short skips them, and so does
// the race detector, under which they would take many minutes; make test-long runs them without it.
func skipSlow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow; skipped with -short")
	}
	if raceEnabled {
		t.Skip("slow under the race detector; make test-long runs it without")
	}
}

func TestZip64LargeFile(t *testing.T) {
	skipSlow(t)
	const size = 5 << 30
	marker := []byte("past the 4 GiB mark")
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse, so that it takes no disk space; the marker makes the content worth checking.
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(marker, 9<<29); err != nil {
		t.Fatal(err)
	}
	f.Close()
	path, hooks := writeArchive(t, dir, Options{Level: 1})
	if len(hooks.warns) > 0 {
		t.Fatalf("warnings: %v", hooks.warns)
	}
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	RegisterDecompressors(&r.Reader)
	e := r.File[0]
	if e.Name != "sparse.img" || e.UncompressedSize64 != size || e.Method != zip.Deflate {
		t.Fatalf("entry %s: %d bytes, method %d; want sparse.img, %d bytes, deflate", e.Name, e.UncompressedSize64, e.Method, size)
	}
	rc, err := e.Open()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	_, err = io.CopyBuffer(h, rc, make([]byte, 1<<20))
	rc.Close()
	if err != nil { // the CRC-32 is checked at the end
		t.Fatal(err)
	}
	if got := [sha256.Size]byte(h.Sum(nil)); got != hooks.files["sparse.img"] {
		t.Errorf("SHA-256 read back %x, OnFile told %x", got, hooks.files["sparse.img"])
	}
	if want := sparseSum(size, 9<<29, marker); hooks.files["sparse.img"] != want {
		t.Errorf("OnFile told SHA-256 %x, want %x", hooks.files["sparse.img"], want)
	}
	unzipTest(t, path)
	verifyOK(t, path) // a data descriptor with 8-byte sizes; the manifest's header past 4 GiB
}

// verifyOK checks that Verify finds nothing wrong with the entries of the archive at path,
// local headers included. writeArchive's manifest is empty, which Verify reports once it has
// read it whole: that is the one problem allowed.
func verifyOK(t *testing.T, path string) {
	t.Helper()
	res, err := Verify(t.Context(), path, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		if p.Entry != format.ManifestName || !strings.HasPrefix(p.Reason, "manifest is not valid") {
			t.Errorf("verify: %s", p)
		}
	}
}

func TestZip64ManyEntries(t *testing.T) {
	skipSlow(t)
	const n = 70_000
	dir := t.TempDir()
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprint(i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, hooks := writeArchive(t, dir, Options{Level: DefaultLevel})
	if len(hooks.files) != n || len(hooks.warns) > 0 {
		t.Fatalf("%d files stored, %d warnings; want %d and none", len(hooks.files), len(hooks.warns), n)
	}
	data, _ := readArchive(t, path)
	if len(data) != n {
		t.Errorf("read %d entries back, want %d", len(data), n)
	}
	if got, want := data["d069/69999"], "file 69999\n"; string(got) != want {
		t.Errorf("d069/69999 holds %q, want %q", got, want)
	}
	if !hasZip64End(t, path) {
		t.Error("no zip64 end of central directory record")
	}
	unzipTest(t, path)
	verifyOK(t, path) // the local headers found through the zip64 end record
}

// hasZip64End looks for the zip64 end of central directory locator near the archive's end.
func hasZip64End(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sig [4]byte
	binary.LittleEndian.PutUint32(sig[:], 0x07064b50)
	return bytes.Contains(b[max(0, len(b)-200):], sig[:])
}

// sparseSum is the SHA-256 of size zero bytes with marker written at off.
func sparseSum(size, off int64, marker []byte) [sha256.Size]byte {
	h := sha256.New()
	zeros := make([]byte, 1<<20)
	io.CopyBuffer(h, io.LimitReader(zeroReader{}, off), zeros)
	h.Write(marker)
	io.CopyBuffer(h, io.LimitReader(zeroReader{}, size-off-int64(len(marker))), zeros)
	return [sha256.Size]byte(h.Sum(nil))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
