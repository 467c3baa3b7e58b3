package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"backup/format"
)

// TestAttackVerifyHashNotOfWhatWasParsed: verify checks an archive against its receipt by
// hashing the file beside the entries' checks, and takes the manifest's status as proven
// by that hash ("the manifest, covered by the SHA-256 just checked, is the archive's").
// The hash was of the file as it was when the hash read it, not of the directory and
// manifest read before: whoever owns the archive file (who may write the set) wrote a
// manifest saying complete over the real one, which says incomplete, while verify read it,
// and the real bytes back whenever the hash read. Verify said the archive is the one
// its receipt (edited to say complete) describes, complete, with no problem: the
// check a receipt edited to say complete must fail. Restore's check of the same file
// (Reader.Sum) checks on its way each range the reading read; verify's did not, for
// speed (the hash began before the directory was read).
// Correct: verify's hash checks the ranges the reading of the directory and manifest read,
// and an archive file changed in between is a problem (ErrChangedWhileRead).
func TestAttackVerifyHashNotOfWhatWasParsed(t *testing.T) {
	real := storedManifestZip(t, "incomplete", "test")
	forged := storedManifestZip(t, "complete", "testxx") // as long: the same layout
	if len(real) != len(forged) || bytes.Equal(real, forged) {
		t.Fatalf("the two archives are %d and %d bytes; want the same size, other bytes", len(real), len(forged))
	}
	sum := sha256.Sum256(real)
	expect := format.Summary{Size: int64(len(real)), SHA256: hex.EncodeToString(sum[:])}
	path := writeZip(t, forged)
	f, size, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenFile(f, size, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Manifest == nil || r.Manifest.Status != "complete" {
		t.Fatalf("the forged manifest was not read: %v", r.ManifestErr)
	}
	// The owner writes the real bytes back while the hash reads, and the forged ones while
	// anything else does: the hash reads the file through r.file, the rest through r.ra.
	r.file = bytes.NewReader(real)
	res, err := r.Verify(t.Context(), VerifyOptions{Expect: &expect, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := problemStrings(res.Problems)
	if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, ErrChangedWhileRead.Error()) }) {
		t.Errorf("verified as %s (problems %q): the manifest read says complete, the file hashed says incomplete; want %q",
			res.RecordedStatus, got, ErrChangedWhileRead)
	}
}

// storedManifestZip is sampleTree with a manifest stored, not deflated, whose status and
// tool version are as given: two such archives of manifests as long have the same layout.
func storedManifestZip(t *testing.T, status, tool string) []byte {
	t.Helper()
	r := openZip(t, buildZip(t, sampleTree, true))
	m := *r.Manifest
	m.Status, m.ToolVersion = status, tool
	data, err := MarshalManifest(&m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	copyEntries(t, zw, buildZip(t, sampleTree, false))
	w, err := zw.CreateHeader(&zip.FileHeader{Name: format.ManifestName, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
