package restore

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"

	"backup/archive"
)

// Offsets of fields in a local file header (APPNOTE 4.3.7) and a central directory record
// (4.3.12), for tests that damage them.
const (
	locFlags  = 6
	locMethod = 8
	locCRC    = 14
	locCSize  = 18
	locUSize  = 22
	locName   = 30
	cenFlags  = 8
)

// localAt returns the offset of the local header of the entry named name in data.
func localAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	return recordAt(t, data, "PK\x03\x04", 26, 30, name)
}

// centralAt returns the offset of the central directory record of the entry named name.
func centralAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	return recordAt(t, data, "PK\x01\x02", 28, 46, name)
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

// flip returns a copy of data with the bits of mask flipped in the byte at off.
func flip(data []byte, off int, mask byte) []byte {
	out := bytes.Clone(data)
	out[off] ^= mask
	return out
}

// verifyAndRestore verifies data and restores it into a new folder; it returns the problems
// of each and the files restored.
func verifyAndRestore(t *testing.T, data []byte) (verified, damaged, restored []string) {
	t.Helper()
	res, err := archive.Verify(t.Context(), writeZip(t, data), archive.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	dest := filepath.Join(t.TempDir(), "dest")
	plan, rr := restoreInto(t, data, dest, Options{})
	if rr == nil {
		t.Fatalf("restore refused: %q", problemStrings(plan.Refused))
	}
	return problemStrings(res.Problems), problemStrings(rr.Damaged), listTree(t, dest)
}

// TestLocalHeaderChecked damages one field of a.txt's local header at a time: Go's reader
// reads the central directory only and would pass every case; unzip -t and bsdtar do not.
// archive.Verify names a.txt, and restore reports it damaged and does not write it.
func TestLocalHeaderChecked(t *testing.T) {
	good := plainZip(t)
	loc := localAt(t, good, "a.txt")
	tests := []struct {
		name string
		off  int
		mask byte
		want string
	}{
		{"crc", locCRC, 0x01, "a.txt: damaged: local header"},
		{"compressed size", locCSize, 0x01, "a.txt: damaged: local header"},
		{"size", locUSize, 0x04, "a.txt: damaged: local header"},
		{"method", locMethod, 0x01, "a.txt: damaged: local header"},
		{"name", locName, 0x20, "a.txt: damaged: local header"},
		{"encrypted flag", locFlags, 0x01, "a.txt: damaged: local header"},
		{"data descriptor flag", locFlags, 0x08, "a.txt: damaged: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verified, damaged, restored := verifyAndRestore(t, flip(good, loc+tt.off, tt.mask))
			for what, got := range map[string][]string{"verify": verified, "restore": damaged} {
				if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
					t.Errorf("%s: problems %q, want one starting %q", what, got, tt.want)
				}
			}
			if !slices.Equal(restored, []string{"b.txt"}) {
				t.Errorf("restored %q, want only b.txt", restored)
			}
		})
	}
}

// TestDataDescriptorFlag follows the local header's data-descriptor flag, as Info-ZIP does:
// an entry whose local header holds its CRC and sizes is read whatever the central flag says
// (libarchive's test_read_format_zip.zip, file1), and a data descriptor is checked where the
// local header says there is one (its file2, whose descriptor holds a wrong CRC).
func TestDataDescriptorFlag(t *testing.T) {
	plain := plainZip(t)
	streamed := buildZip(t, []zent{{name: "a.txt", body: "alpha"}, {name: "b.txt", body: "bravo"}}, false)
	descriptor := func(data []byte) int { // a.txt's data descriptor, by its signature
		return bytes.Index(data[localAt(t, data, "a.txt"):], []byte("PK\x07\x08")) + localAt(t, data, "a.txt")
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"central flag only, local values right", flip(plain, centralAt(t, plain, "a.txt")+cenFlags, 0x08), nil},
		{"both flags, descriptor right", streamed, nil},
		{"local flag only, descriptor right", flip(streamed, centralAt(t, streamed, "a.txt")+cenFlags, 0x08), nil},
		{"both flags, descriptor crc wrong", flip(streamed, descriptor(streamed)+4, 0x01), []string{"a.txt: damaged: data descriptor"}},
		{"both flags, descriptor size wrong", flip(streamed, descriptor(streamed)+12, 0x01), []string{"a.txt: damaged: data descriptor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verified, damaged, restored := verifyAndRestore(t, tt.data)
			for what, got := range map[string][]string{"verify": verified, "restore": damaged} {
				if len(got) != len(tt.want) || len(got) > 0 && !strings.HasPrefix(got[0], tt.want[0]) {
					t.Errorf("%s: problems %q, want %q", what, got, tt.want)
				}
			}
			if want := 2 - len(tt.want); len(restored) != want {
				t.Errorf("restored %q, want %d files", restored, want)
			}
		})
	}
}

// TestUnsupportedNamed names what cannot be read: the method, or encryption. archive.Verify and
// restore say the same, and restore writes none of them.
func TestUnsupportedNamed(t *testing.T) {
	tests := []struct {
		method, flags uint16
		want          string
	}{
		{14, 0, "x: unsupported compression method 14 (LZMA)"},
		{12, 0, "x: unsupported compression method 12 (bzip2)"},
		{95, 0, "x: unsupported compression method 95 (xz)"},
		{98, 0, "x: unsupported compression method 98 (PPMd)"},
		{9, 0, "x: unsupported compression method 9 (Deflate64)"},
		{77, 0, "x: unsupported compression method 77"},
		{zip.Deflate, 0x1, "x: encrypted"},
		{99, 0x1, "x: encrypted (WinZip AES)"},
		{99, 0, "x: encrypted (WinZip AES)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			verified, damaged, restored := verifyAndRestore(t, rawEntry(t, "x", tt.method, tt.flags))
			for what, got := range map[string][]string{"verify": verified, "restore": damaged} {
				if len(got) != 1 || got[0] != tt.want {
					t.Errorf("%s: problems %q, want %q", what, got, tt.want)
				}
			}
			if len(restored) != 0 {
				t.Errorf("restored %q, want nothing", restored)
			}
		})
	}
}

// TestRestoreSameVerdict: what verify reports of entries restore does not write from their
// data (folders, symlinks), restore reports too, in its plan, before it writes anything.
func TestRestoreSameVerdict(t *testing.T) {
	good := buildZip(t, []zent{{name: "app/"}, {name: "app/link", body: "target", symlink: true, store: true},
		{name: "app/f", body: "file"}}, false)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"folder's local header", flip(good, localAt(t, good, "app/")+locName, 0x20), "app/: damaged: local header"},
		{"symlink's data", flipByteIn(t, good, "app/link"), "app/link: crc-32 mismatch"},
		{"folder with data", flip(good, centralAt(t, good, "app/")+24, 0x01), "app/: damaged: a directory entry with data"},
		// libarchive's test_read_format_zip_symlink_lzma.zip: verify said 1, restore 0.
		{"symlink in LZMA", lzmaSymlink(t), "link: unsupported compression method 14 (LZMA)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := archive.Verify(t.Context(), writeZip(t, tt.data), archive.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(t.Context(), openZip(t, tt.data), filepath.Join(t.TempDir(), "dest"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string][]string{"verify": problemStrings(res.Problems), "restore plan": problemStrings(plan.Damaged)} {
				if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
					t.Errorf("%s: problems %q, want one starting %q", what, got, tt.want)
				}
			}
		})
	}
}

// lzmaSymlink is one symlink entry compressed with LZMA, which this reader does not read.
func lzmaSymlink(t *testing.T) []byte {
	t.Helper()
	fh := &zip.FileHeader{Name: "link", Method: 14}
	fh.SetMode(fs.ModeSymlink | 0o777)
	body := []byte("lzma bytes")
	return rawZip(t, fh, body, crc32.ChecksumIEEE(body))
}
