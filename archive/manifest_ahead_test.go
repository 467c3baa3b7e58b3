package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"backup/format"
)

// sameManifest opens data as NewReader does in memory, with the manifest read ahead, and as
// it does a bucket's object, without; it fails t unless both find the same manifest, or the
// same error, and returns what the second found.
func sameManifest(t *testing.T, data []byte) *Reader {
	t.Helper()
	ahead, aheadErr := NewReader(bytes.NewReader(data), int64(len(data)))
	plain, plainErr := NewReader(io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), int64(len(data)))
	if errString(aheadErr) != errString(plainErr) {
		t.Fatalf("opened %v with the manifest read ahead, %v without", aheadErr, plainErr)
	}
	if plainErr != nil {
		return nil
	}
	if errString(ahead.ManifestErr) != errString(plain.ManifestErr) || !reflect.DeepEqual(ahead.Manifest, plain.Manifest) {
		t.Fatalf("manifest read ahead: %v, %+v; without: %v, %+v", ahead.ManifestErr, ahead.Manifest, plain.ManifestErr, plain.Manifest)
	}
	return plain
}

// TestManifestReadAhead: the manifest of an archive file is parsed beside Go's reader, and
// what it gives is what reading it after gives: for a good archive, and for one whose
// manifest is damaged.
func TestManifestReadAhead(t *testing.T) {
	data := buildZip(t, sampleTree, true)
	f := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	a := readManifestAhead(file, int64(len(data)), false)
	if a == nil {
		t.Fatal("a file's manifest was not read ahead")
	}
	a.wait()
	if a.err != nil || a.m == nil || len(a.m.Files) == 0 {
		t.Fatalf("read ahead: %v, %+v", a.err, a.m)
	}
	sameManifest(t, data)
	damaged := bytes.Clone(data)
	i := bytes.LastIndex(damaged, []byte("PK\x03\x04")) // the manifest's local header: it is last
	damaged[i+60] ^= 0xff
	if r := sameManifest(t, damaged); r == nil || r.ManifestErr == nil {
		t.Fatal("a damaged manifest read without error")
	}
}

// TestManifestReadAheadOpenFile: an archive opened as the commands open one (OpenFile, whose
// reads are recorded for Sum) has its manifest parsed beside Go's reader. A recording
// reader put in front of the file once made every command parse it after (cc9397f): 45 ms
// of a restore of the bench corpus, before anything could be written.
func TestManifestReadAheadOpenFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(f, buildZip(t, sampleTree, true), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(f)
	if err != nil || r.Manifest == nil {
		t.Fatal(err, r.ManifestErr)
	}
	defer r.Close()
	if !r.aheadTaken {
		t.Error("the manifest was parsed after Go's reader, not beside it")
	}
}

// TestManifestReadAheadOtherRecord: a parse read ahead from another record than the one Go's
// reader gives is not taken; the manifest is read again from Go's.
func TestManifestReadAheadOtherRecord(t *testing.T) {
	data := buildZip(t, sampleTree, true)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || r.Manifest == nil {
		t.Fatal(err, r.ManifestErr)
	}
	ref := r.manifests[0]
	for _, change := range []func(a *manifestAhead){
		func(a *manifestAhead) { a.data++ },
		func(a *manifestAhead) { a.f.CRC32++ },
		func(a *manifestAhead) { a.f.UncompressedSize64-- },
		func(a *manifestAhead) { a.off++ },
	} {
		a := readManifestAhead(bytes.NewReader(data), int64(len(data)), false)
		a.wait()
		a.m, a.err = nil, io.ErrUnexpectedEOF // what it would give, were it another's
		change(a)
		m, err := a.take(ref.f, ref.loc, format.Within{Entries: len(r.Entries)})
		if err != nil || !reflect.DeepEqual(m, r.Manifest) {
			t.Errorf("took %v, %v; want the manifest read again", m, err)
		}
	}
}

// FuzzManifestReadAhead: whatever the bytes, the manifest read ahead is the one read after.
func FuzzManifestReadAhead(f *testing.F) {
	f.Add(buildZip(f, sampleTree, true))
	f.Add(buildZip(f, sampleTree[:2], true))
	f.Add(buildZip(f, sampleTree, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameManifest(t, data)
	})
}

// TestAttackManifestAheadCountLies: Go's reader ends the directory at the first record it
// cannot read (sizes of 0xffffffff and no zip64 field) and takes it as whole when the end
// record's count, which lies, says so; the walk of the parse read ahead reads every record
// there is. The parse read ahead then bounded the manifest's records by the walk's count of
// entries, not by the count of Go's entries the manifest is read for: a manifest of more
// records than Go's entries allow was taken, where reading it after refuses it. Correct:
// the parse read ahead is taken only when it was bounded as reading after bounds it.
func TestAttackManifestAheadCountLies(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	m := &format.Manifest{ToolVersion: "test", Status: "complete", Files: []format.File{}, Skipped: []format.Skipped{},
		Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "a", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("1"))
	for i := range 66000 { // more than 2*1+65536: too many for an archive of one entry
		m.Files = append(m.Files, format.File{Path: fmt.Sprintf("f%d", i), Size: 1, SHA256: format.Digest(sha256.Sum256([]byte("1")))})
	}
	addManifest(t, zw, m)
	for i := range 300 { // records Go's reader does not read: the walk counts 301 entries
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("b%d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	b0 := bytes.Index(data, []byte("PK\x01\x02"))
	for ; string(data[b0+46:b0+48]) != "b0"; b0 += 46 + int(le16(data[b0+28:])) + int(le16(data[b0+30:])) + int(le16(data[b0+32:])) {
	}
	binary.LittleEndian.PutUint32(data[b0+20:], uint32max) // Go's reader stops here
	end := len(data) - 22
	binary.LittleEndian.PutUint16(data[end+8:], 2) // and finds the count it was told
	binary.LittleEndian.PutUint16(data[end+10:], 2)
	// The directory Go's reader reads is then shorter than the end record says, which is
	// damage of its own (unzip reads every record): each reader must say the same.
	plain, plainErr := NewReader(io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), int64(len(data)))
	if plainErr == nil && plain.ManifestErr == nil {
		t.Fatal("the archive does not make the case: read after, its manifest is taken")
	}
	ahead, aheadErr := NewReader(bytes.NewReader(data), int64(len(data)))
	r, openErr := Open(writeZip(t, data))
	if openErr == nil {
		defer r.Close()
	}
	var pathErr *fs.PathError // Open names the file
	if errors.As(openErr, &pathErr) {
		openErr = pathErr.Err
	}
	for _, got := range []struct {
		r   *Reader
		err error
	}{{ahead, aheadErr}, {r, openErr}} {
		switch {
		case errString(got.err) != errString(plainErr):
			t.Errorf("read ahead: %v; read after: %v", got.err, plainErr)
		case got.err == nil && (errString(got.r.ManifestErr) != errString(plain.ManifestErr) || got.r.Manifest != nil):
			t.Errorf("manifest read ahead: %v (files: %v); read after: %v", got.r.ManifestErr, got.r.Manifest != nil, plain.ManifestErr)
		}
	}
}
