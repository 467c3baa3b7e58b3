package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreateTempHeldWhileOpen: another open of a temp file CreateTemp made finds it held by
// a run until the run closes it; a file made otherwise is not held.
func TestCreateTempHeldWhileOpen(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateTemp(dir, "a.zip")
	if err != nil {
		t.Fatal(err)
	}
	if !IsTempName(filepath.Base(f.Name())) {
		t.Errorf("%s is not a temp name", f.Name())
	}
	probe := func() bool {
		t.Helper()
		g, err := os.Open(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		return HeldByRun(g)
	}
	if !probe() {
		t.Error("a temp file being written is not held")
	}
	if !probe() {
		t.Error("a probe let the writer's hold go")
	}
	f.Close()
	if probe() {
		t.Error("a closed temp file is still held")
	}
	plain := filepath.Join(dir, ".b.zip.tmp-1")
	os.WriteFile(plain, nil, 0o600)
	g, _ := os.Open(plain)
	defer g.Close()
	if HeldByRun(g) {
		t.Error("a file no run made is held")
	}
}

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".a.zip.tmp-1": true, ".a.zip.tmp-1234567890": true, ".x.tmp-.tmp-42": true,
		"a.zip.tmp-1": false, ".a.zip.tmp-": false, ".a.zip.tmp-12345678901": false,
		".a.zip.tmp-1x": false, ".tmp-1": false, ".a.zip": false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsRunTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".a.zip.tmp-1": true, ".a.zip.tmp-3k2j9a0b-1z": true, ".a.zip.tmp-0-0": true,
		".a.zip.tmp-3k2j9a0b-": false, ".a.zip.tmp--1": false, ".a.zip.tmp-3K-1": false,
		".a.zip.tmp-12345678901234-1": false, "a.zip.tmp-ab-1": false, ".tmp-ab-1": false,
	} {
		if got := IsRunTempName(name); got != want {
			t.Errorf("IsRunTempName(%q) = %v, want %v", name, got, want)
		}
	}
}
