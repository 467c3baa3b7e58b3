package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

// localAt returns the offset of the local header of the entry named name in data.
func localAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	return recordAt(t, data, "PK\x03\x04", 26, 30, name)
}

func recordAt(t *testing.T, data []byte, sig string, nameLenAt, nameAt int, name string) int {
	t.Helper()
	for off := 0; ; off++ {
		i := bytes.Index(data[off:], []byte(sig))
		if i < 0 {
			t.Fatalf("no %q record for %s", sig, name)
		}
		off += i
		if off+nameAt+len(name) <= len(data) &&
			int(binary.LittleEndian.Uint16(data[off+nameLenAt:])) == len(name) &&
			string(data[off+nameAt:off+nameAt+len(name)]) == name {
			return off
		}
	}
}

// plainZip writes a.txt (deflated) and b.txt (stored) as backup's writer does: CRC and sizes
// in the local header, no data descriptor.
func plainZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name, body string
		method     uint16
	}{{"a.txt", strings.Repeat("alpha ", 100), zip.Deflate}, {"b.txt", "bravo", zip.Store}} {
		data := []byte(e.body)
		if e.method == zip.Deflate {
			data = deflate(t, data)
		}
		fh := &zip.FileHeader{Name: e.name, Method: e.method, CRC32: crc32.ChecksumIEEE([]byte(e.body)),
			CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(e.body))}
		w, err := zw.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func deflate(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, 6)
	fw.Write(data)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHeaderOffsets finds each entry's local header through the central directory as Go's
// reader does, also with data before the archive (a self-extractor's stub) and in zip64.
func TestHeaderOffsets(t *testing.T) {
	plain := plainZip(t)
	stub := append([]byte(strings.Repeat("#!stub\n", 10)), plain...)
	for name, data := range map[string][]byte{"plain": plain, "prefixed": stub} {
		t.Run(name, func(t *testing.T) {
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := headerOffsets(bytes.NewReader(data), int64(len(data)), zr.File)
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{int64(localAt(t, data, "a.txt")), int64(localAt(t, data, "b.txt"))}
			if !slices.Equal(got, want) {
				t.Errorf("offsets %v, want %v", got, want)
			}
		})
	}
}
