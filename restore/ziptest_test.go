package restore

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backup/archive"
	"backup/format"
)

// The archives restore's tests read, built byte by byte with Go's zip writer as another
// tool (or backup) would write them. They are the builders of archive's tests, on archive's
// exported API only: restore sees an archive as any caller does.

// zent is one entry of an archive built by a test; names ending in "/" are directories.
type zent struct {
	name    string
	body    string
	mode    fs.FileMode // 0: 0644 for files, 0755 for directories
	mtime   time.Time   // zero: testTime
	store   bool        // stored rather than deflated
	symlink bool        // a symlink entry whose target is body
	dos     bool        // made on DOS: "made by" host 0, no Unix mode
}

var testTime = time.Date(2024, 3, 4, 5, 6, 8, 0, time.UTC)

var sampleTree = []zent{
	{name: "app/"},
	{name: "app/a.txt", body: "alpha\n"},
	{name: "app/empty/"},
	{name: "app/sub/"},
	{name: "app/sub/b.bin", body: strings.Repeat("binary\x00\x01", 5000)},
	{name: "app/sub/stored", body: "stored as is", store: true},
	{name: "app/zero", body: ""},
}

// goodSum is the SHA-256 of "test".
const goodSum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// buildZip writes entries with Go's zip writer, as another tool would; with manifest set,
// a manifest listing every file entry (status complete) follows, as backup writes it.
func buildZip(t *testing.T, entries []zent, manifest bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	m := &format.Manifest{ToolVersion: "test", Status: "complete", Files: []format.File{}, Skipped: []format.Skipped{},
		Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.store || strings.HasSuffix(e.name, "/") {
			fh.Method = zip.Store
		}
		mtime := e.mtime
		if mtime.IsZero() {
			mtime = testTime
		}
		fh.Modified = mtime // Go writes the DOS date and an unsigned extended timestamp
		if !e.dos {
			fh.SetMode(entryMode(e)) // and with it host Unix
		}
		if manifest && strings.HasSuffix(e.name, "/") {
			// backup records every folder it stores, with the owner its ux field holds
			root := format.Meta{}
			fh.Extra = addOwner(nil, &root)
			m.Dirs = append(m.Dirs, format.Dir{Path: strings.TrimSuffix(e.name, "/"), Meta: root})
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(e.name, "/") && !e.symlink {
			sum := sha256.Sum256([]byte(e.body))
			m.Files = append(m.Files, format.File{Path: e.name, Size: int64(len(e.body)), SHA256: format.Digest(sum)})
		}
	}
	if manifest {
		addManifest(t, zw, m)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func entryMode(e zent) fs.FileMode {
	switch {
	case e.symlink:
		return fs.ModeSymlink | 0o777
	case strings.HasSuffix(e.name, "/"):
		return fs.ModeDir | or(e.mode, 0o755)
	}
	return or(e.mode, 0o644)
}

func or(m, def fs.FileMode) fs.FileMode {
	if m == 0 {
		return def
	}
	return m
}

// addManifest writes m, in its plain encoding, as the next entry.
func addManifest(t *testing.T, zw *zip.Writer, m *format.Manifest) {
	t.Helper()
	m.Schema = format.ManifestSchema
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	w, err := zw.Create(format.ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
}

// withManifest builds entries with a manifest that edit changes.
func withManifest(t *testing.T, entries []zent, edit func(*format.Manifest)) []byte {
	t.Helper()
	data := buildZip(t, entries, true)
	m := *openZip(t, data).Manifest
	m.Files = slices.Clone(m.Files)
	edit(&m)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range goZip(t, data).File {
		if f.Name == format.ManifestName {
			continue
		}
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	addManifest(t, zw, &m)
	zw.Close()
	return buf.Bytes()
}

// digest is the Digest of a SHA-256 written in hex.
func digest(hexSum string) format.Digest {
	var d format.Digest
	if err := d.UnmarshalText([]byte(hexSum)); err != nil {
		panic(err)
	}
	return d
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
func rawZip(t *testing.T, fh *zip.FileHeader, body []byte, crc uint32) []byte {
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

// addOwner appends an Info-ZIP ux field (uid and gid, 4 bytes each) for m to extra, as
// backup's writer does.
func addOwner(extra []byte, m *format.Meta) []byte {
	var ux [4 + 11]byte
	binary.LittleEndian.PutUint16(ux[0:], 0x7875)
	binary.LittleEndian.PutUint16(ux[2:], 11)
	ux[4] = 1 // version
	ux[5] = 4
	binary.LittleEndian.PutUint32(ux[6:], m.UID)
	ux[10] = 4
	binary.LittleEndian.PutUint32(ux[11:], m.GID)
	return append(extra, ux[:]...)
}

// writeZip writes data to a file in a new temp folder and returns its path.
func writeZip(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.zip")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openZip(t *testing.T, data []byte) *archive.Reader {
	t.Helper()
	r, err := archive.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

// goZip reads data with Go's zip reader, for the entries as they are stored.
func goZip(t *testing.T, data []byte) *zip.Reader {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// problemStrings renders problems as their lines.
func problemStrings(ps []archive.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// flipByteIn flips one byte in the middle of the stored data of the named entry.
func flipByteIn(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	for _, f := range goZip(t, data).File {
		if f.Name != name {
			continue
		}
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		out := bytes.Clone(data)
		out[off+int64(f.CompressedSize64)/2] ^= 0x40
		return out
	}
	t.Fatalf("no entry %q", name)
	return nil
}
