package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreSetForgedArchive: someone who may write a set's folder, but cannot rewrite what
// the receipt records of the archive (its SHA-256), swaps a file's bytes in LATEST's target
// and edits the manifest to agree, keeping the archive's size. Only the receipt's SHA-256 can
// tell: verify refuses it, and restore of the set must too, before it writes anything.
func TestRestoreSetForgedArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, set := filepath.Join(dir, "app"), filepath.Join(dir, "set")
	makeTree(t, src, map[string]node{"f": {content: "good data 1\n"}})
	mustExit(t, backup(t, runOpts{}, "create", "--output-dir", set, src), 0)
	name := readLatest(t, set)
	forgeSameSize(t, filepath.Join(set, name), "app/f", []byte("EVIL data 1\n"))

	mustExit(t, backup(t, runOpts{}, "verify", set), 1)
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{}, "restore", set, dest)
	mustExit(t, r, 1)
	if !strings.Contains(r.stderr, "does not match the receipt") {
		t.Errorf("stderr does not say the archive is not its receipt's:\n%s", r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "app/f")); err == nil {
		t.Errorf("restore wrote the forged file: %q", got)
	}
}

// forgeSameSize rewrites the archive at path with the file name holding data (of the same
// length as its old bytes), the manifest's SHA-256 for it changed to agree, and the zip's
// comment padding the archive to its old size: all a receipt that records only the size
// would accept.
func forgeSameSize(t *testing.T, path, name string, data []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(old), int64(len(old)))
	if err != nil {
		t.Fatal(err)
	}
	var oldSum string
	for _, f := range zr.File {
		if f.Name == name {
			oldSum = hex.EncodeToString(sha256Of(t, f))
		}
	}
	newSum := sha256.Sum256(data)
	build := func(comment string) []byte {
		var out bytes.Buffer
		zw := zip.NewWriter(&out)
		for _, f := range zr.File {
			fh := f.FileHeader
			switch f.Name {
			case name:
				writeRaw(t, zw, &fh, data)
			case ".backup-manifest.json":
				m := readAll(t, f)
				if !bytes.Contains(m, []byte(oldSum)) {
					t.Fatalf("manifest does not hold %s's sha256", name)
				}
				writeRaw(t, zw, &fh, bytes.ReplaceAll(m, []byte(oldSum), []byte(hex.EncodeToString(newSum[:]))))
			default:
				raw, err := f.OpenRaw()
				if err != nil {
					t.Fatal(err)
				}
				w, err := zw.CreateRaw(&fh)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(w, raw); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := zw.SetComment(comment); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	pad := len(old) - len(build(""))
	if pad < 0 || pad > 0xffff {
		t.Fatalf("forged archive is %d bytes, the original %d: cannot pad", len(old)-pad, len(old))
	}
	forged := build(strings.Repeat(" ", pad))
	if len(forged) != len(old) {
		t.Fatalf("forged archive is %d bytes, want %d", len(forged), len(old))
	}
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRaw writes data as the entry fh, compressed by fh's method, with its CRC-32 and sizes.
func writeRaw(t *testing.T, zw *zip.Writer, fh *zip.FileHeader, data []byte) {
	t.Helper()
	body := data
	if fh.Method == zip.Deflate {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression)
		fw.Write(data)
		fw.Close()
		body = b.Bytes()
	}
	fh.CRC32 = crc32.ChecksumIEEE(data)
	fh.UncompressedSize64, fh.CompressedSize64 = uint64(len(data)), uint64(len(body))
	w, err := zw.CreateRaw(fh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256Of(t *testing.T, f *zip.File) []byte {
	t.Helper()
	s := sha256.Sum256(readAll(t, f))
	return s[:]
}
