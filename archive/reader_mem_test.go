package archive

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"backup/format"
)

// A Reader keeps its entries and manifest, not Go's zip reader as well: at 100,000 entries
// it holds each Entry, the manifest's record of it, and one copy of its name, which the
// Entry shares with the record (joinManifest).
func TestReaderLetsGoOfZipReader(t *testing.T) {
	const n = 100_000
	var entries []zent
	for i := range n {
		entries = append(entries, zent{name: fmt.Sprintf("d%03d/f%06d", i%1000, i), body: "x", store: true})
	}
	ra := bytes.NewReader(buildZip(t, entries, true))
	entries = nil
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(ra, ra.Size())
	if err != nil || r.Manifest == nil {
		t.Fatalf("%v, manifest %v", err, r.ManifestErr)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	// The Entry and its pointer, the manifest's File (96 bytes), and their name (16 bytes),
	// with 8 to spare: a second copy of the name would add 16, and Go's zip.File about 200.
	want := float64(unsafe.Sizeof(Entry{})) + 8 + float64(unsafe.Sizeof(format.File{})) + 16 + 8
	t.Logf("%.0f bytes per entry held, Entry %d bytes", perEntry, unsafe.Sizeof(Entry{}))
	if perEntry > want {
		t.Errorf("%.0f bytes per entry held, want at most %.0f", perEntry, want)
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(ra)
}
