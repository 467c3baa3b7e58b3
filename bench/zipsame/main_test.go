package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeZip writes an archive of the given entries, in order, each dated the same.
func writeZip(t *testing.T, path string, entries [][2]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Deflate, Modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
		if err == nil {
			_, err = w.Write([]byte(e[1]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompare(t *testing.T) {
	const manifest = `{"files": [{"path": "a", "sha256": "00", "mtime_nsec": 5, "ctime_ns": 7}]}`
	base := [][2]string{{"a", "alpha"}, {manifestName, manifest}}
	tests := []struct {
		name    string
		other   [][2]string
		verdict string // "" when they must differ
	}{
		{"same", base, "byte-identical"},
		{"manifest times", [][2]string{{"a", "alpha"}, {manifestName, strings.ReplaceAll(manifest, "7", "8000")}}, "identical except the manifest's timestamps"},
		{"manifest digest", [][2]string{{"a", "alpha"}, {manifestName, strings.ReplaceAll(manifest, `"00"`, `"01"`)}}, ""},
		{"content", [][2]string{{"a", "alphA"}, {manifestName, manifest}}, ""},
		{"name", [][2]string{{"b", "alpha"}, {manifestName, manifest}}, ""},
		{"one less", [][2]string{{manifestName, manifest}}, ""},
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.zip")
	writeZip(t, a, base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := filepath.Join(t.TempDir(), "b.zip")
			writeZip(t, b, tt.other)
			got, err := compare(a, b)
			if tt.verdict == "" && err == nil {
				t.Fatalf("compare = %q, want a difference", got)
			}
			if tt.verdict != "" && (err != nil || got != tt.verdict) {
				t.Fatalf("compare = %q, %v; want %q", got, err, tt.verdict)
			}
		})
	}
}
