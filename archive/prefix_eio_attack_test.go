package archive

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// TestAttackPrefixEIOWordedDamage: holdsLocalSig counts bytes that cannot be read as
// holding a local header signature, so an EIO reading the stub before the first entry of
// another tool's archive (a self-extractor's) is reported as damage, "damaged: the 100
// bytes before the first entry hold a local header signature (an entry the central
// directory does not list)", and the failed read is not named: damage claimed for what was
// a failed read, as commit 5ca9ffe stopped for backup's other walks of the structure.
func TestAttackPrefixEIOWordedDamage(t *testing.T) {
	var buf bytes.Buffer
	buf.Write(bytes.Repeat([]byte{'#'}, 100)) // a stub, no signature in it
	zw := zip.NewWriter(&buf)
	zw.SetOffset(100)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.txt", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	r0, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	res0, err := r0.Verify(t.Context(), VerifyOptions{Jobs: 1})
	if err != nil || !res0.OK() {
		t.Fatalf("the archive as written: %v %+v", err, res0)
	}

	ra := &failFrom{data: data, off: 0}
	r, err := NewReader(ra, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ra.armed.Store(true)
	res, err := r.Verify(t.Context(), VerifyOptions{Jobs: 1})
	if ra.hits.Load() == 0 {
		t.Skip("the stub was not read")
	}
	if err != nil {
		if !strings.Contains(err.Error(), "input/output error") {
			t.Errorf("verify: %v, want the EIO", err)
		}
		return
	}
	var eio bool
	for _, p := range res.Problems {
		if strings.Contains(p.Reason, "input/output error") {
			eio = true
		}
		if strings.Contains(p.Reason, "damaged") {
			t.Errorf("an EIO reading the stub is reported as damage: %s: %s", p.Entry, p.Reason)
		}
	}
	if !eio {
		t.Errorf("an EIO reading the stub (%d reads failed) is not reported: problems %+v", ra.hits.Load(), res.Problems)
	}
}
