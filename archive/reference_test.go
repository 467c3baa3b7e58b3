package archive

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/walker"
)

// refArchive archives the regular files below dir as backup create does, with what reuse
// compares in the manifest, and returns the archive's path.
func refArchive(t *testing.T, dir string) string {
	t.Helper()
	var files []File
	out := t.TempDir()
	w, err := Create(t.Context(), out, "ref.zip", Options{Method: Deflate, Level: DefaultLevel, OnFile: func(f File) { files = append(files, f) }})
	if err != nil {
		t.Fatal(err)
	}
	walk := walker.Walker{Visit: func(e walker.Entry) error {
		if !e.Info.Mode().IsRegular() {
			return nil
		}
		meta := FileMetaOf(e.Info)
		return w.AddFile(e.Hold(), e.Rel, e.Info, &meta)
	}}
	if err := walk.Walk(t.Context(), dir, "."); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil { // OnFile has heard of every file
		t.Fatal(err)
	}
	if _, err := w.CloseManifest(&Manifest{Status: "complete", Files: files}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "ref.zip")
	if err := w.Commit(path, false); err != nil {
		t.Fatal(err)
	}
	return path
}

func refTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": strings.Repeat("text ", 1000), "empty": "",
		"sub/b.txt": "b", "sub/deeper/c.bin": "\x00\x01\x02"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func unchanged(t *testing.T, ref *Reference, dir, name string) bool {
	t.Helper()
	info, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return ref.Unchanged(name, info)
}

func TestReferenceUnchanged(t *testing.T) {
	dir := refTree(t)
	ref, err := OpenReference(refArchive(t, dir), Deflate, DefaultLevel, ReuseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if got := ref.Reusable(); got != 4 {
		t.Errorf("Reusable() = %d, want 4", got)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "sub/b.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a.txt": true, "empty": true, "sub/deeper/c.bin": true,
		"sub/b.txt": false, "sub": false} {
		if got := unchanged(t, ref, dir, name); got != want {
			t.Errorf("Unchanged(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestReferenceOtherSettings(t *testing.T) {
	ref, err := OpenReference(refArchive(t, refTree(t)), Deflate, 1, ReuseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if got := ref.Reusable(); got != 0 {
		t.Errorf("a reference made at level %d gives %d files to a run at level 1, want 0", DefaultLevel, got)
	}
}

func TestReferenceUnreadable(t *testing.T) {
	for name, data := range map[string][]byte{
		"not a zip":   []byte("hello"),
		"no manifest": buildZip(t, []zent{{name: "a", body: "a"}}, false),
		"two manifests": buildZip(t, []zent{{name: ManifestName, body: "{}"}, {name: "a", body: "a"},
			{name: ManifestName + "/"}}, false),
	} {
		t.Run(name, func(t *testing.T) {
			ref, err := OpenReference(writeZip(t, data), Deflate, DefaultLevel, ReuseOptions{})
			if err == nil {
				ref.Close()
				t.Fatal("opened")
			}
		})
	}
}

// TestReferenceRepeatedName: a name stored twice is reused from neither entry.
func TestReferenceRepeatedName(t *testing.T) {
	data := buildZip(t, []zent{{name: "a", body: "1"}, {name: "b", body: "b"}, {name: "a", body: "2"}, {name: "c", body: "c"}}, true)
	f, size, err := openFile(writeZip(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := &Reference{f: f, size: size}
	if _, err := ref.readCentral(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range ref.files {
		names = append(names, f.name)
	}
	if got, want := strings.Join(names, " "), "b c"; got != want {
		t.Errorf("records of %q, want %q", got, want)
	}
}

// TestReferenceChecksLocalHeader: an entry whose local header disagrees with its central
// record is not copied, even when its bytes are those the manifest records.
func TestReferenceChecksLocalHeader(t *testing.T) {
	dir := refTree(t)
	path := refArchive(t, dir)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The local header's CRC-32 of the first entry, a.txt (walk order).
	if !bytes.HasPrefix(data[localLen:], []byte("a.txt")) {
		t.Fatalf("first entry is not a.txt: %q", data[localLen:localLen+8])
	}
	data[14] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := OpenReference(path, Deflate, DefaultLevel, ReuseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	info, err := os.Lstat(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ref.lookup("a.txt", info)
	if !ok {
		t.Fatal("a.txt not unchanged")
	}
	if err := e.checkRaw(make([]byte, 1024)); err == nil || !strings.Contains(err.Error(), "local header") {
		t.Errorf("checkRaw = %v, want the local header's damage", err)
	}
}

// TestWalkCentral: the central directory streamed gives the headers and local header
// offsets Go's reader gives, with bytes before the archive too (a self-extractor).
func TestWalkCentral(t *testing.T) {
	entries := []zent{{name: "dir/"}, {name: "dir/a", body: "aaaa"}, {name: "b", body: "b", store: true},
		{name: "dos.txt", body: "x", dos: true}, {name: "old", body: "o", mtime: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}}
	plain := buildZip(t, entries, true)
	for name, data := range map[string][]byte{"plain": plain, "prefixed": append([]byte("#!/bin/sh\nexit\n"), plain...)} {
		t.Run(name, func(t *testing.T) {
			ra := bytes.NewReader(data)
			zr, err := zip.NewReader(ra, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			offsets, err := headerOffsets(ra, int64(len(data)), zr.File)
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			err = walkCentral(ra, int64(len(data)), func(rec *centralRecord) error {
				want := zr.File[i].FileHeader
				want.Modified = time.Time{} // not filled in: see modTime
				got := rec.FileHeader
				if got.Name != want.Name || got.CreatorVersion != want.CreatorVersion || got.Flags != want.Flags ||
					got.Method != want.Method || got.ModifiedTime != want.ModifiedTime || got.ModifiedDate != want.ModifiedDate ||
					got.CRC32 != want.CRC32 || got.CompressedSize64 != want.CompressedSize64 ||
					got.UncompressedSize64 != want.UncompressedSize64 || !bytes.Equal(got.Extra, want.Extra) ||
					got.ExternalAttrs != want.ExternalAttrs || got.Mode() != want.Mode() {
					t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
				}
				if rec.local != offsets[i] {
					t.Errorf("record %d: local header at %d, want %d", i, rec.local, offsets[i])
				}
				if got, want := modTime(&rec.FileHeader), modTime(&zr.File[i].FileHeader); rec.Name != ManifestName && !got.Equal(want) {
					t.Errorf("record %d: modTime %v, want %v", i, got, want)
				}
				i++
				return nil
			})
			if err != nil || i != len(zr.File) {
				t.Fatalf("walkCentral: %v after %d records, want %d", err, i, len(zr.File))
			}
		})
	}
}
