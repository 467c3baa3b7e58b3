package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

var sampleTree = []zent{
	{name: "app/"},
	{name: "app/a.txt", body: "alpha\n"},
	{name: "app/empty/"},
	{name: "app/sub/"},
	{name: "app/sub/b.bin", body: strings.Repeat("binary\x00\x01", 5000)},
	{name: "app/sub/stored", body: "stored as is", store: true},
	{name: "app/zero", body: ""},
}

func TestVerifyGood(t *testing.T) {
	tests := []struct {
		name         string
		manifest     bool
		wantManifest bool
		wantStatus   string
	}{
		{"backup archive", true, true, "complete"},
		{"foreign archive", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeZip(t, buildZip(t, sampleTree, tt.manifest))
			res, err := Verify(t.Context(), path, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("problems: %q", problemStrings(res.Problems))
			}
			wantBytes := int64(len("alpha\n") + 5000*len("binary\x00\x01") + len("stored as is"))
			if res.Files != 4 || res.Dirs != 3 || res.Bytes != wantBytes {
				t.Errorf("%d files, %d dirs, %d bytes; want 4, 3, %d", res.Files, res.Dirs, res.Bytes, wantBytes)
			}
			if res.HasManifest != tt.wantManifest || res.RecordedStatus != tt.wantStatus {
				t.Errorf("manifest %v status %q, want %v %q", res.HasManifest, res.RecordedStatus, tt.wantManifest, tt.wantStatus)
			}
		})
	}
}

func TestVerifyProblems(t *testing.T) {
	good := buildZip(t, sampleTree, true)
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"flipped byte in deflated entry", flipByteIn(t, good, "app/sub/b.bin"), []string{"app/sub/b.bin: damaged"}},
		{"flipped byte in stored entry", flipByteIn(t, good, "app/sub/stored"), []string{"app/sub/stored: crc-32 mismatch"}},
		{"flipped byte in manifest", flipByteIn(t, good, format.ManifestName), []string{format.ManifestName + ": "}},
		{"content differs from manifest, crc right", withManifest(t, sampleTree, func(m *format.Manifest) {
			m.Files[0].SHA256 = digest(goodSum)
		}), []string{"app/a.txt: sha256 mismatch"}},
		{"size differs from manifest", withManifest(t, sampleTree, func(m *format.Manifest) {
			m.Files[0].Size = 7
		}), []string{"app/a.txt: size 6, the manifest says 7"}},
		{"entry not in manifest", withManifest(t, sampleTree, func(m *format.Manifest) {
			m.Files = m.Files[1:]
		}), []string{"app/a.txt: not in the manifest"}},
		{"manifest entry missing from archive", withManifest(t, sampleTree, func(m *format.Manifest) {
			m.Files = append(m.Files, format.File{Path: "app/gone", Size: 1, SHA256: digest(goodSum)})
		}), []string{"app/gone: in the manifest but missing from the archive"}},
		{"manifest not json", rawManifest(t, "not json"), []string{format.ManifestName + ": manifest is not valid"}},
		{"unsafe names", buildZip(t, []zent{{name: "../evil", body: "x"}, {name: "ok", body: "y"}, {name: "ok", body: "y"}}, false),
			[]string{`../evil: unsafe name: ".." component`, "ok: duplicate name"}},
		{"crc field zero", crcZero(t), []string{"x: crc-32 mismatch"}},
		{"unsupported method", rawEntry(t, "x", 12, 0), []string{"x: unsupported compression method 12"}},
		{"encrypted", rawEntry(t, "x", zip.Store, 0x1), []string{"x: encrypted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(t.Context(), writeZip(t, tt.data), VerifyOptions{})
			if err != nil {
				t.Fatalf("Verify: %v, want problems", err)
			}
			got := problemStrings(res.Problems)
			t.Logf("%q", got)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d: %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %q, want it to start %q", got[i], tt.want[i])
				}
			}
		})
	}
}

func TestVerifyExpect(t *testing.T) {
	data := buildZip(t, sampleTree, true)
	sum := sha256.Sum256(data)
	right := format.Summary{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	tests := []struct {
		name   string
		expect format.Summary
		want   []string
	}{
		{"matches", right, nil},
		{"other size", format.Summary{Size: right.Size + 1, SHA256: right.SHA256}, []string{"archive is"}},
		{"other sha256", format.Summary{Size: right.Size, SHA256: goodSum}, []string{"archive sha256 does not match the receipt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(t.Context(), writeZip(t, data), VerifyOptions{Expect: &tt.expect})
			if err != nil {
				t.Fatal(err)
			}
			got := problemStrings(res.Problems)
			if len(got) != len(tt.want) || len(got) > 0 && !strings.HasPrefix(got[0], tt.want[0]) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
			if !res.ArchiveChecked {
				t.Error("ArchiveChecked false, want true")
			}
		})
	}
}

// TestOpenUnreadable checks that what is not a zip archive at all fails Open with a clear
// cause and no panic.
func TestOpenUnreadable(t *testing.T) {
	good := buildZip(t, sampleTree, true)
	eocd := bytes.LastIndex(good, []byte("PK\x05\x06"))
	cdir := bytes.Index(good, []byte("PK\x01\x02"))
	random := make([]byte, 4096)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(random)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"random bytes", random},
		{"truncated in half", good[:len(good)/2]},
		{"end record cut", good[:eocd+10]},
		{"central directory cut out", slices.Concat(good[:cdir], good[eocd:])},
		{"central directory zeroed", zeroed(good, cdir, 46)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(t.Context(), writeZip(t, tt.data), VerifyOptions{})
			if err == nil {
				t.Fatal("Verify succeeded, want an error")
			}
			if !strings.Contains(err.Error(), "zip") && !strings.Contains(err.Error(), "cut short") {
				t.Errorf("error %q does not say what is wrong", err)
			}
		})
	}
}

func zeroed(data []byte, off, n int) []byte {
	out := bytes.Clone(data)
	clear(out[off : off+n])
	return out
}

// withManifest builds entries with a manifest that edit changes.
func withManifest(t *testing.T, entries []zent, edit func(*format.Manifest)) []byte {
	t.Helper()
	data := buildZip(t, entries, true)
	r := openZip(t, data)
	m := *r.Manifest
	m.Files = slices.Clone(m.Files)
	edit(&m)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	copyEntries(t, zw, data)
	addManifest(t, zw, &m)
	zw.Close()
	return buf.Bytes()
}

func rawManifest(t *testing.T, content string) []byte {
	t.Helper()
	data := buildZip(t, sampleTree, false)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	copyEntries(t, zw, data)
	w, _ := zw.Create(format.ManifestName)
	w.Write([]byte(content))
	zw.Close()
	return buf.Bytes()
}

// copyEntries copies the entries of the zip data holds, but its manifest, to zw.
func copyEntries(t *testing.T, zw *zip.Writer, data []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if strings.TrimSuffix(f.Name, "/") == format.ManifestName {
			continue
		}
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
}

// crcZero stores an entry whose header claims CRC 0: Go's reader skips the check then.
func crcZero(t *testing.T) []byte {
	body := []byte("not what the crc says")
	return rawZip(t, &zip.FileHeader{Name: "x", Method: zip.Store}, body, 0)
}

// rawEntry stores one entry with the given method and flags and the right CRC.
func rawEntry(t *testing.T, name string, method, flags uint16) []byte {
	body := []byte("data")
	return rawZip(t, &zip.FileHeader{Name: name, Method: method, Flags: flags}, body, crc32.ChecksumIEEE(body))
}

// rawZip writes a zip of one entry whose header is fh with crc and body's size, and whose
// data is body as it is: no compression, no check.
func rawZip(t testing.TB, fh *zip.FileHeader, body []byte, crc uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh.CRC32 = crc
	fh.CompressedSize64, fh.UncompressedSize64 = uint64(len(body)), uint64(len(body))
	w, err := zw.CreateRaw(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	zw.Close()
	return buf.Bytes()
}
