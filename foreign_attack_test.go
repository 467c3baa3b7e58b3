package main

import (
	"archive/zip"
	"bytes"
	bin "encoding/binary"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackDirByModeOnly: an entry named app/x (no trailing slash) whose mode says it is a
// directory, a Unix one or the MS-DOS directory attribute, holding 11 bytes. unzip and
// Python's zipfile go by the name and write app/x as an 11-byte file; bsdtar and 7-Zip go by
// the mode and make a folder. backup read it as a folder, its data read but written nowhere:
// verify said ok and restore made the folder, exit 0. Without data it is still a file to
// some tools and a folder to others. Either way it is damage, and nothing is written of it.
func TestAttackDirByModeOnly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		dos  bool
		body string
	}{
		{"unix mode with data", false, "secret data"},
		{"unix mode empty", false, ""},
		{"dos attribute with data", true, "secret data"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "d.zip")
			writeDirByModeZip(t, arch, tt.dos, tt.body)
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			const reason = "directory by its mode"
			if v.code != exitFailed || !strings.Contains(v.stderr, "app/x") || !strings.Contains(v.stderr, reason) {
				t.Errorf("verify: exit %d %q; want %d and app/x: ...%s...", v.code, v.stderr, exitFailed, reason)
			}
			if r.code != exitFailed || !strings.Contains(r.stderr, reason) {
				t.Errorf("restore: exit %d %q; want %d and %s", r.code, r.stderr, exitFailed, reason)
			}
			if _, err := os.Lstat(filepath.Join(dir, "dest/app/x")); err == nil {
				t.Errorf("restore wrote dest/app/x; want it not written")
			}
		})
	}
}

// writeDirByModeZip writes a zip of one entry, app/x, a directory by its mode (Unix, or the
// MS-DOS attribute from a DOS host) and not by its name, holding body.
func writeDirByModeZip(t *testing.T, path string, dos bool, body string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: "app/x", Method: zip.Store}
	if dos {
		fh.ExternalAttrs = 0x10 // MS-DOS directory; "made by" host 0
	} else {
		fh.SetMode(fs.ModeDir | 0o755)
	}
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(body))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestForeignDotSlashNames: bsdtar --format zip -cf x.zip . (and Windows' tar.exe, which is
// bsdtar) names every entry "./a.txt", and its first entry is "./", the folder itself.
// unzip, 7-Zip, bsdtar and Python's zipfile all extract ./a.txt as a.txt; backup refused
// every entry as unsafe ("." component), in verify and restore. A "./" before a name
// changes no path; the "./" entry is the destination itself, which unzip and Python leave
// as it is. Two entries that are one path with and without "./" are one name stored twice.
func TestForeignDotSlashNames(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bsdtar"); err != nil {
		t.Skip("no bsdtar")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(src, "sub/b.txt"), []byte("b\n"), 0o644)
	os.Chmod(src, 0o700)
	arch := filepath.Join(dir, "t.zip")
	tar := exec.Command("bsdtar", "--format", "zip", "-cf", arch, ".")
	tar.Dir = src
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("bsdtar: %v %s", err, out)
	}
	if v := backup(t, runOpts{dir: dir}, "verify", arch); v.code != exitComplete {
		t.Errorf("verify: exit %d %q; want 0", v.code, v.stderr)
	}
	dest := filepath.Join(dir, "dest")
	os.Mkdir(dest, 0o755)
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	if r.code != exitComplete {
		t.Fatalf("restore: exit %d %q; want 0", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "sub/b.txt")); err != nil || string(b) != "b\n" {
		t.Errorf("dest/sub/b.txt: %q, %v; want \"b\\n\"", b, err)
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("dest: %v, %v; want its mode 0755 kept", fi.Mode(), err)
	}

	twice := filepath.Join(dir, "twice.zip")
	writeHostileZip(t, twice, []hostileEntry{{name: "./a.txt", body: "1"}, {name: "a.txt", body: "2"}})
	r = backup(t, runOpts{dir: dir}, "restore", twice, filepath.Join(dir, "dest2"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "duplicate name") {
		t.Errorf("restore of ./a.txt and a.txt: exit %d %q; want %d and duplicate name", r.code, r.stderr, exitFailed)
	}
}

// TestAttackDescriptorLocalSizes: a stored entry app/f of 12 bytes, "evilGOODGOOD", with a
// data descriptor (flag 8) whose local header gives the CRC-32 and sizes of its first 4
// bytes rather than 0 ("not known yet"). unzip, 7-Zip and Python's zipfile read the 12
// bytes; libarchive takes the sizes a local header gives, so bsdtar writes app/f as "evil"
// (warning "Inconsistent uncompressed size"). backup verify said ok and restore wrote the
// 12 bytes, exit 0. A local header with a data descriptor may leave them 0; any it gives
// must be the central directory's.
func TestAttackDescriptorLocalSizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "dd.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "app/f", Method: zip.Store}) // flag 8, local header zeros
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("evilGOODGOOD"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	bin.LittleEndian.PutUint32(b[14:], crc32.ChecksumIEEE([]byte("evil")))
	bin.LittleEndian.PutUint32(b[18:], 4)
	bin.LittleEndian.PutUint32(b[22:], 4)
	os.WriteFile(arch, b, 0o644)
	v := backup(t, runOpts{dir: dir}, "verify", arch)
	r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
	if v.code != exitFailed || !strings.Contains(v.stderr, "app/f: damaged: local header") {
		t.Errorf("verify: exit %d %q; want %d and app/f: damaged: local header ...", v.code, v.stderr, exitFailed)
	}
	if r.code != exitFailed || !strings.Contains(r.stderr, "app/f: damaged") {
		t.Errorf("restore: exit %d %q; want %d and app/f: damaged", r.code, r.stderr, exitFailed)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dest/app/f")); err == nil {
		t.Errorf("restore wrote dest/app/f; want it not written")
	}
}
