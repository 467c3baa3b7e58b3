package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// reference writes an archive of one file, with a manifest listing it when withManifest.
func reference(t *testing.T, withManifest bool) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create("tree/f")
	w.Write([]byte("data"))
	if withManifest {
		m := &format.Manifest{Status: "complete", Files: []format.File{{Path: "tree/f", Size: 4, SHA256: sha256.Sum256([]byte("data"))}}}
		w, _ := z.Create(format.ManifestName)
		if _, err := m.WriteTo(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ref.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestManifestsFloorCopies: with the manifests' work, the floor still writes a copy of the
// reference, and it fails on a reference without a manifest, which it must parse.
func TestManifestsFloorCopies(t *testing.T) {
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "f"), []byte("data"), 0o600)
	ref := reference(t, true)
	out := filepath.Join(t.TempDir(), "out.zip")
	if err := run(ref, tree, out, false, true); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(ref)
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the copy: %d bytes, %v; want the reference's %d", len(got), err, len(want))
	}
	if err := run(reference(t, false), tree, filepath.Join(t.TempDir(), "out.zip"), false, true); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Errorf("a reference without a manifest: %v", err)
	}
}
