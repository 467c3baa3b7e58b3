package main

import (
	"archive/zip"
	"bytes"
	bin "encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAttackRestoreRootEntryUnchecked: the entry "./" (bsdtar's first entry of an archive
// of ".") is the folder restored into, which restore passes over. It passed over its
// headers too, and took an archive holding it for one whose entries were not all checked:
// so it never looked for bytes between entries that no entry covers. verify failed each of
// these archives (exit 1); restore said complete (exit 0), wrote b.txt after a hidden local
// entry that a streaming reader extracts, and called "./" holding 13 bytes, or "." a folder
// by its mode alone, nothing worth a word (hostile-archive pass).
func TestAttackRestoreRootEntryUnchecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		archive func(t *testing.T) []byte
		want    string // the problem verify and restore both give
		lost    string // the file restore must not write
	}{
		{"gap after ./", zipWithRootAndGap, "b.txt: damaged: 63 bytes before its local header that no entry covers", "b.txt"},
		{"./ with data", func(t *testing.T) []byte { return zipWithRoot(t, "./", true) }, "./: damaged: a directory entry with data", ""},
		{". a folder by its mode", func(t *testing.T) []byte { return zipWithRoot(t, ".", false) },
			"./: damaged: a directory by its mode, not by its name (no trailing slash): unzip and Python's zipfile extract it as a file", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "root.zip")
			if err := os.WriteFile(arch, tt.archive(t), 0o644); err != nil {
				t.Fatal(err)
			}
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, tt.want) {
				t.Fatalf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, tt.want)
			}
			dest := filepath.Join(dir, "dest")
			r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
			if r.code != exitFailed || !strings.Contains(r.stderr, tt.want+" (not restored)\n") {
				t.Errorf("restore: exit %d %q; want %d and %q", r.code, r.stderr, exitFailed, tt.want+" (not restored)")
			}
			if got := listTree(t, dest); tt.lost != "" && slices.Contains(got, tt.lost) {
				t.Errorf("restore wrote %s: %q", tt.lost, got)
			}
		})
	}
}

// zipWithRoot writes a zip of the entry root (a folder by its Unix mode; holding 13 bytes
// when data) and a.txt.
func zipWithRoot(t *testing.T, root string, data bool) []byte {
	t.Helper()
	// Go's writer refuses data for a name that ends in a slash: the entry is written as
	// "._" and renamed in its headers after.
	placeholder := strings.ReplaceAll(root, "/", "_")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: placeholder, Method: zip.Store}
	fh.SetMode(fs.ModeDir | 0o755)
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	if data {
		w.Write([]byte("hidden secret"))
	}
	fh = &zip.FileHeader{Name: "a.txt", Method: zip.Store}
	fh.SetMode(0o644)
	if w, err = zw.CreateHeader(fh); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("a\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(placeholder), []byte(root))
}

// zipWithRootAndGap writes a zip of "./", a.txt and b.txt with a whole local entry,
// evil.txt, between a.txt and b.txt that the central directory does not list.
func zipWithRootAndGap(t *testing.T) []byte {
	t.Helper()
	zipOf := func(names ...string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			fh := &zip.FileHeader{Name: n, Method: zip.Store}
			fh.SetMode(0o644)
			if strings.HasSuffix(n, "/") {
				fh.SetMode(fs.ModeDir | 0o755)
			}
			w, err := zw.CreateHeader(fh)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(n, "/") {
				w.Write([]byte(n + "\n"))
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	evil := zipOf("evil.txt")
	evil = evil[:bytes.Index(evil, []byte("PK\x01\x02"))]
	good := zipOf("./", "a.txt", "b.txt")
	cd := bytes.Index(good, []byte("PK\x01\x02"))
	at := bytes.LastIndex(good[:cd], []byte("PK\x03\x04")) // b.txt's local header
	out := slices.Concat(good[:at], evil, good[at:])
	shift := uint32(len(evil))
	for i := cd + len(evil); i+46 <= len(out); i++ {
		if bytes.Equal(out[i:i+4], []byte("PK\x01\x02")) {
			if off := bin.LittleEndian.Uint32(out[i+42:]); off >= uint32(at) {
				bin.LittleEndian.PutUint32(out[i+42:], off+shift)
			}
		}
	}
	eocd := bytes.LastIndex(out, []byte("PK\x05\x06"))
	bin.LittleEndian.PutUint32(out[eocd+16:], bin.LittleEndian.Uint32(out[eocd+16:])+shift)
	return out
}
