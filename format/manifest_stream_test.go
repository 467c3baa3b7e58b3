package format

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// compareScan checks that ScanManifest gives what ParseManifest gives (the same manifest,
// its files handed on in order, or the same error), or says it cannot.
func compareScan(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := ParseManifest(bytes.NewReader(data))
	var files []File
	got, err := ScanManifest(bytes.NewReader(data), all, func(f *File) { files = append(files, *f) })
	switch {
	case errors.Is(err, ErrNotAsWritten):
		return
	case wantErr != nil || err != nil:
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("ScanManifest: %v\nParseManifest: %v", err, wantErr)
		}
		return
	}
	if len(got.Files) != 0 {
		t.Fatalf("ScanManifest kept %d files", len(got.Files))
	}
	if len(files) > 0 {
		got.Files = files
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanManifest:\n%+v\nParseManifest:\n%+v", got, want)
	}
	read, err := ReadManifest(bytes.NewReader(data), all)
	if err != nil || !reflect.DeepEqual(read, want) {
		t.Fatalf("ReadManifest: %v\n%+v\nParseManifest:\n%+v", err, read, want)
	}
	// DeepEqual cannot see two records sharing one owner record (a slab's slot given twice).
	distinctOwners(t, "ScanManifest", files)
	distinctOwners(t, "ReadManifest", read.Files)
}

func distinctOwners(t *testing.T, by string, files []File) {
	t.Helper()
	seen := map[*Meta]int{}
	for i, f := range files {
		if f.Meta == nil {
			continue
		}
		if j, ok := seen[f.Meta]; ok {
			t.Fatalf("%s: files %d and %d share one owner record", by, j, i)
		}
		seen[f.Meta] = i
	}
}

func TestScanManifestMatchesParse(t *testing.T) {
	for name, input := range decodeCases {
		t.Run(name, func(t *testing.T) { compareScan(t, []byte(input)) })
	}
	for _, dir := range []string{"FuzzParseManifest", "FuzzParseManifestMatchesJSON"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, p := range paths {
			t.Run(filepath.Base(p), func(t *testing.T) { compareScan(t, fuzzSeed(t, p)) })
		}
	}
}

// A manifest backup would not write is left to ParseManifest: files out of order or listed
// twice, a symlink with a file's path, a list of files given twice.
func TestScanManifestNotAsWritten(t *testing.T) {
	rec := func(p string) string { return `{"path": "` + p + `", "size": 1, "sha256": "` + goodSum + `"}` }
	for name, input := range map[string]string{
		"out of order":   `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + rec("b") + `, ` + rec("a") + `]}`,
		"listed twice":   `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + rec("a") + `, ` + rec("a") + `]}`,
		"symlink a file": `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + rec("a") + `], "symlinks": [{"path": "a", "target": "x"}]}`,
		"files twice":    `{"schema": "backup.manifest/v2", "status": "complete", "files": [` + rec("a") + `], "files": []}`,
		"no sha256":      `{"schema": "backup.manifest/v2", "status": "complete", "files": [{"path": "a", "size": 1}]}`,
		"v2 field in v1": `{"schema": "backup.manifest/v1", "status": "complete", "files": [{"path": "a", "size": 1, "sha256": "` + goodSum + `", "uid": 1}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ScanManifest(bytes.NewReader([]byte(input)), all, func(*File) {}); !errors.Is(err, ErrNotAsWritten) {
				t.Errorf("ScanManifest: %v, want ErrNotAsWritten", err)
			}
		})
	}
}

func FuzzScanManifestMatchesParse(f *testing.F) {
	for _, input := range decodeCases {
		f.Add([]byte(input))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareScan(t, data) })
}

// ScanManifest holds no record of the files it has handed on: 8 bytes a file (a digest of
// its path) and its buffers, measured at its last file of 100,000.
func TestScanManifestHoldsNoFiles(t *testing.T) {
	const n = 100_000
	m := &Manifest{Schema: ManifestSchema, Status: string(Complete), Files: make([]File, n)}
	for i := range m.Files {
		m.Files[i] = File{Path: fmt.Sprintf("d%03d/f%06d", i/1000, i), Size: 1, SHA256: Digest{1}, Meta: &Meta{UID: 1, CtimeNsec: 5, Ino: 6}}
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	m = nil
	runtime.GC()
	var before, at runtime.MemStats
	runtime.ReadMemStats(&before)
	seen := 0
	_, err := ScanManifest(bytes.NewReader(buf.Bytes()), all, func(f *File) {
		if seen++; seen == n {
			runtime.GC()
			runtime.ReadMemStats(&at)
		}
	})
	if err != nil || seen != n {
		t.Fatalf("%d files handed on, %v", seen, err)
	}
	if perFile := (float64(at.HeapAlloc) - float64(before.HeapAlloc)) / n; perFile > 24 {
		t.Errorf("%.0f bytes per file held, want at most 24", perFile)
	}
	runtime.KeepAlive(buf)
}

// Files' owner records come from slabs of metaSlab: each record keeps its own, across slabs,
// as ParseManifest gives them.
func TestScanManifestOwnersAcrossSlabs(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"schema": "backup.manifest/v2", "status": "complete", "files": [`)
	n := 2*metaSlab + 3
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"path": "f%05d", "size": 1, "sha256": "%s", "uid": %d, "user": "u%d", "ino": %d}`,
			i, goodSum, i, i%3, i+1)
	}
	b.WriteString(`]}`)
	compareScan(t, b.Bytes())
	m, err := ReadManifest(bytes.NewReader(b.Bytes()), Within{Entries: n, Notes: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		if f.Meta == nil || f.Meta.UID != uint32(i) || f.Meta.User != fmt.Sprintf("u%d", i%3) || f.Meta.Ino != uint64(i+1) {
			t.Fatalf("file %d: owner record %+v", i, f.Meta)
		}
	}
}
