package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
)

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

// buildZip writes entries with Go's zip writer, as another tool would; with manifest set,
// a manifest listing every file entry (status complete) follows, as backup writes it.
func buildZip(t testing.TB, entries []zent, manifest bool) []byte {
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

func addManifest(t testing.TB, zw *zip.Writer, m *format.Manifest) {
	t.Helper()
	data, err := MarshalManifest(m)
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

// writeZip writes data to a file in a new temp folder and returns its path.
func writeZip(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.zip")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openZip(t *testing.T, data []byte) *Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

// problemStrings renders problems as their lines.
func problemStrings(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// flipByteIn flips one byte in the middle of the stored data of the named entry.
func flipByteIn(t testing.TB, data []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
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
