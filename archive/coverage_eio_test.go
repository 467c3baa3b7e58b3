package archive

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
)

// failAfterFirst reads from r, and fails each read at off after the first with EIO: a
// sector that read once and then not (a transient fault).
type failAfterFirst struct {
	r     *bytes.Reader
	off   int64
	reads int
}

func (f *failAfterFirst) ReadAt(p []byte, off int64) (int, error) {
	if off == f.off {
		if f.reads++; f.reads > 1 {
			return 0, syscall.EIO
		}
	}
	return f.r.ReadAt(p, off)
}

// TestVerifyManifestHeadersEIO: verify checks that the entries and the manifest lie end to
// end, through the manifest's local header read once more; a read of it that fails then is
// a problem named for the manifest, not dropped (the strace sweep of open_eio_test.go
// found verify exit 0 without a word of it, attack pass 22's fixes).
func TestVerifyManifestHeadersEIO(t *testing.T) {
	data := buildZip(t, sampleTree, true)
	ra := &failAfterFirst{r: bytes.NewReader(data), off: int64(bytes.LastIndex(data, []byte("PK\x03\x04")))}
	r, err := NewReader(ra, int64(len(data)))
	if err != nil || r.ManifestErr != nil {
		t.Fatal(err, r.ManifestErr)
	}
	res, err := r.Verify(t.Context(), VerifyOptions{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ra.reads < 2 {
		t.Fatalf("the manifest's local header was read %d times, want a second read to fail", ra.reads)
	}
	found := false
	for _, p := range res.Problems {
		found = found || p.Entry == ".backup-manifest.json" && strings.Contains(p.Reason, "input/output error")
	}
	if res.OK() || !found {
		t.Errorf("verify ok %v, problems %+v; want the manifest's read failure", res.OK(), res.Problems)
	}
}
