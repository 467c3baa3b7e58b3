package archive

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// A reference holds one refFile per file for the whole run: a million of them at 120 bytes.
func TestRefFileSize(t *testing.T) {
	if got := unsafe.Sizeof(refFile{}); got > 120 {
		t.Errorf("refFile is %d bytes, want at most 120", got)
	}
}

// The records of a reference's central directory take their size and their names' bytes,
// and no more: names are in one string, the list is made as long as the end record says.
func TestReferenceRecordsCompact(t *testing.T) {
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
	ref := &Reference{}
	if _, err := ref.readCentral(ra, ra.Size()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(ref.files) != n {
		t.Fatalf("%d records, want %d", len(ref.files), n)
	}
	perFile := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	t.Logf("%.0f bytes per file", perFile)
	if want := float64(unsafe.Sizeof(refFile{})) + 16 + 8; perFile > want {
		t.Errorf("%.0f bytes per file held, want at most %.0f", perFile, want)
	}
	runtime.KeepAlive(ra)
	runtime.KeepAlive(ref)
}

// A reference's manifest is read a file at a time when it is as backup writes it (sorted),
// and parsed whole otherwise: an unsorted one is read all the same, one listing a file
// twice refused as ParseManifest refuses it.
func TestReferenceManifestNotAsWritten(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "b"}, ""},
		{[]string{"b", "a"}, ""},
		{[]string{"a", "b", "a"}, `file "a" is listed twice`},
	} {
		var entries []zent
		for _, n := range tt.names {
			entries = append(entries, zent{name: n, body: n})
		}
		ra := bytes.NewReader(buildZip(t, entries, true))
		ref := &Reference{}
		rec, err := ref.readCentral(ra, ra.Size())
		if err != nil {
			t.Fatal(err)
		}
		m, err := ref.readManifest(ra, rec)
		switch {
		case tt.want == "" && (err != nil || m.Status != "complete"):
			t.Errorf("%v: %v, %+v", tt.names, err, m)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: %v, want %q", tt.names, err, tt.want)
		}
	}
}
