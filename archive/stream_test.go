package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestCreateStream writes an archive to a plain io.Writer (as an upload or a pipe takes it),
// which cannot seek: the bytes must be the archive whole, matching the summary, and read
// back clean by our reader, Go's and unzip -t.
func TestCreateStream(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{"a.txt": "hello", "big.bin": strings.Repeat("x", 3<<20), "d/e.txt": ""} {
		path := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out onlyWriter
	m := &format.Manifest{Schema: format.ManifestSchema, Status: "complete"}
	onFile := func(f format.File) { m.Files = append(m.Files, f) }
	w, err := CreateStream(t.Context(), &out, t.TempDir(), Options{Level: DefaultLevel, OnFile: onFile})
	if err != nil {
		t.Fatal(err)
	}
	if w.TempPath() != "" {
		t.Errorf("TempPath %q, want none", w.TempPath())
	}
	addTree(t, w, src)
	sum, err := w.CloseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	w.Abort() // a no-op for a stream: nothing to remove
	h := sha256.Sum256(out.Bytes())
	if sum.Size != int64(out.Len()) || sum.SHA256 != hex.EncodeToString(h[:]) {
		t.Errorf("summary %+v, want %d bytes with SHA-256 %x", sum, out.Len(), h)
	}
	path := filepath.Join(t.TempDir(), "stream.zip")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := readArchive(t, path)
	if got := string(data["big.bin"]); got != strings.Repeat("x", 3<<20) {
		t.Errorf("big.bin read back as %d bytes", len(got))
	}
	unzipTest(t, path)
	res, err := Verify(t.Context(), path, VerifyOptions{Expect: &sum.Summary})
	if err != nil || !res.OK() {
		t.Errorf("Verify: %v, %+v", err, res)
	}
}

// onlyWriter hides bytes.Buffer's other methods: the writer gets an io.Writer and nothing
// else.
type onlyWriter struct{ buf bytes.Buffer }

func (o *onlyWriter) Write(p []byte) (int, error) { return o.buf.Write(p) }
func (o *onlyWriter) Bytes() []byte               { return o.buf.Bytes() }
func (o *onlyWriter) Len() int                    { return o.buf.Len() }
