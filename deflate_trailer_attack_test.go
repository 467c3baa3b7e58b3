package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	bin "encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackDeflateTrailerHidesEntry: a.txt is a deflate entry whose compressed size runs
// past the end of its deflate stream, over a whole local entry, evil.txt (after a fake data
// descriptor, when a.txt has one). A reader of the central directory inflates a.txt and
// stops at the stream's end; a streaming reader (cat x.zip | bsdtar -x) goes on from there
// and extracts evil.txt. verify said ok and restore complete, exit 0: bytes that no entry's
// data cover, inside an entry (hostile-archive pass).
func TestAttackDeflateTrailerHidesEntry(t *testing.T) {
	t.Parallel()
	const want = "a.txt: damaged: its compressed data go on after the end of its deflate stream, where a streaming reader (bsdtar reading a pipe) looks for the next entry"
	for _, descriptor := range []bool{true, false} {
		t.Run(map[bool]string{true: "data descriptor", false: "sizes in the local header"}[descriptor], func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "trailer.zip")
			if err := os.WriteFile(arch, zipWithDeflateTrailer(t, descriptor), 0o644); err != nil {
				t.Fatal(err)
			}
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, want+"\n") {
				t.Errorf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, want)
			}
			dest := filepath.Join(dir, "dest")
			r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
			if r.code != exitFailed || !strings.Contains(r.stderr, want+" (not restored)\n") {
				t.Errorf("restore: exit %d %q; want %d and %q", r.code, r.stderr, exitFailed, want+" (not restored)")
			}
			if got := listTree(t, dest); !slices.Equal(got, []string{"b.txt"}) {
				t.Errorf("restored %q; want b.txt alone", got)
			}
		})
	}
}

// zipWithDeflateTrailer writes a zip of a.txt and b.txt whose a.txt's compressed data
// hold, after its deflate stream, a data descriptor of that stream (with descriptor) and
// the whole local entry of evil.txt.
func zipWithDeflateTrailer(t *testing.T, descriptor bool) []byte {
	t.Helper()
	hello := []byte("hello\n")
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.DefaultCompression)
	fw.Write(hello)
	fw.Close()
	var evil bytes.Buffer
	ew := zip.NewWriter(&evil)
	w, err := ew.CreateRaw(&zip.FileHeader{Name: "evil.txt", Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte("pwned\n")), CompressedSize64: 6, UncompressedSize64: 6})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("pwned\n"))
	ew.Flush()
	payload := slices.Clone(comp.Bytes())
	if descriptor {
		payload = bin.LittleEndian.AppendUint32(payload, 0x08074b50)
		payload = bin.LittleEndian.AppendUint32(payload, crc32.ChecksumIEEE(hello))
		payload = bin.LittleEndian.AppendUint32(payload, uint32(comp.Len()))
		payload = bin.LittleEndian.AppendUint32(payload, uint32(len(hello)))
	}
	payload = append(payload, evil.Bytes()...) // its local entry; ew is never closed: no directory
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: "a.txt", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(hello),
		CompressedSize64: uint64(len(payload)), UncompressedSize64: uint64(len(hello))}
	if descriptor {
		fh.Flags |= 0x8
	}
	fh.SetMode(0o644)
	if w, err = zw.CreateRaw(fh); err != nil {
		t.Fatal(err)
	}
	w.Write(payload)
	fh = &zip.FileHeader{Name: "b.txt", Method: zip.Store}
	fh.SetMode(0o644)
	if w, err = zw.CreateHeader(fh); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("b\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
