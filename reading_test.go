package main

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// localHeaderAt returns the offset of the local header of the entry named name in data.
func localHeaderAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	for off := 0; ; off++ {
		i := bytes.Index(data[off:], []byte("PK\x03\x04"))
		if i < 0 {
			t.Fatalf("no local header for %s", name)
		}
		off += i
		n := int(data[off+26]) | int(data[off+27])<<8
		if n == len(name) && off+30+n <= len(data) && string(data[off+30:off+30+n]) == name {
			return off
		}
	}
}

// TestLocalHeaderDamage flips one field of one entry's local header in an archive backup
// made, with no receipt beside it (which would catch any change): verify fails naming the
// entry, and restore reports it and does not write it, as unzip -t and bsdtar do not read
// such an entry as the central directory describes it.
func TestLocalHeaderDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "s"), map[string]node{
		"a.txt": {content: strings.Repeat("alpha ", 100)}, "b.txt": {content: "bravo"}})
	if r := backup(t, runOpts{dir: dir}, "create", "-q", "-o", "b.zip", "s"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(dir, "b.zip.receipt.json"))
	good, err := os.ReadFile(filepath.Join(dir, "b.zip"))
	if err != nil {
		t.Fatal(err)
	}
	loc := localHeaderAt(t, good, "s/a.txt")
	tests := []struct {
		field string
		off   int
		mask  byte
	}{
		{"flags", 6, 0x01}, {"method", 8, 0x01}, {"crc", 14, 0x01}, {"compressed size", 18, 0x01},
		{"size", 22, 0x04}, {"name", 30, 0x20}, {"data-descriptor flag", 6, 0x08},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			data := bytes.Clone(good)
			data[loc+tt.off] ^= tt.mask
			path := filepath.Join(t.TempDir(), "b.zip")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			v := backup(t, runOpts{}, "verify", path)
			if v.code != 1 || !strings.Contains(v.stderr, "s/a.txt: damaged: ") {
				t.Errorf("verify: exit %d, stderr %q; want 1 naming s/a.txt", v.code, v.stderr)
			}
			dest := filepath.Join(t.TempDir(), "dest")
			r := backup(t, runOpts{}, "restore", path, dest)
			if r.code != 1 || !strings.Contains(r.stderr, "s/a.txt: damaged: ") {
				t.Errorf("restore: exit %d, stderr %q; want 1 naming s/a.txt", r.code, r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(dest, "s/a.txt")); err == nil {
				t.Error("restore wrote s/a.txt")
			}
		})
	}
}

// TestForeignDescriptorZips: archives whose entries carry data descriptors, as Info-ZIP
// writes them when asked to or when writing to a pipe, and Python writing to a pipe, verify
// and restore: the local headers are checked without false alarms.
func TestForeignDescriptorZips(t *testing.T) {
	t.Parallel()
	mustTool(t, "zip")
	mustTool(t, "python3")
	dir := t.TempDir()
	content := strings.Repeat("some text to deflate\n", 50)
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	const pyStream = `import sys, zipfile
with zipfile.ZipFile(sys.stdout.buffer, "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("in.txt", "w") as f:
        f.write(open("in.txt", "rb").read())
`
	tests := []struct {
		name string
		cmd  []string
	}{
		{"zip -fd", []string{"zip", "-q", "-fd", "-", "in.txt"}},
		{"zip to a pipe", []string{"zip", "-q", "-", "in.txt"}},
		{"python to a pipe", []string{"python3", "-c", pyStream}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.cmd[0], tt.cmd[1:]...)
			cmd.Dir = dir
			out, err := cmd.Output() // to a pipe

			if err != nil {
				t.Fatalf("%v: %v", tt.cmd, err)
			}
			path := filepath.Join(t.TempDir(), "foreign.zip")
			if err := os.WriteFile(path, out, 0o600); err != nil {
				t.Fatal(err)
			}
			if !hasDescriptor(t, path) {
				t.Fatalf("%v wrote no data descriptor: the case is not tested", tt.cmd)
			}
			if v := backup(t, runOpts{}, "verify", path); v.code != 0 {
				t.Errorf("verify: exit %d: %s", v.code, v.stderr)
			}
			dest := filepath.Join(t.TempDir(), "dest")
			if r := backup(t, runOpts{}, "restore", path, dest); r.code != 0 {
				t.Fatalf("restore: exit %d: %s", r.code, r.stderr)
			}
			if got, err := os.ReadFile(filepath.Join(dest, "in.txt")); err != nil || string(got) != content {
				t.Errorf("restored in.txt: %q, %v", got, err)
			}
		})
	}
}

func hasDescriptor(t *testing.T, path string) bool {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Flags&0x8 != 0 {
			return true
		}
	}
	return false
}

// TestUnreadableEntriesExitCodes: verify and restore name the entries they cannot read, by
// method or as encrypted, and agree on the exit code (1); restore writes the rest.
func TestUnreadableEntriesExitCodes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name          string
		method, flags uint16
	}{{"ok.txt", zip.Store, 0}, {"lzma.bin", 14, 0}, {"bz.bin", 12, 0}, {"secret.txt", zip.Deflate, 0x1}} {
		body := []byte("data of " + e.name)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: e.method, Flags: e.flags,
			CRC32: crc32.ChecksumIEEE(body), CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "foreign.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"lzma.bin: unsupported compression method 14 (LZMA)\n",
		"bz.bin: unsupported compression method 12 (bzip2)\n", "secret.txt: encrypted\n"}
	dest := filepath.Join(t.TempDir(), "dest")
	v, r := backup(t, runOpts{}, "verify", path), backup(t, runOpts{}, "restore", path, dest)
	if v.code != 1 || r.code != 1 {
		t.Errorf("exit codes: verify %d, restore %d; want 1 and 1", v.code, r.code)
	}
	for _, line := range want {
		if !strings.Contains(v.stderr, line) {
			t.Errorf("verify: stderr %q, want %q", v.stderr, line)
		}
		if !strings.Contains(r.stderr, strings.TrimSuffix(line, "\n")) {
			t.Errorf("restore: stderr %q, want %q", r.stderr, line)
		}
	}
	if strings.Contains(r.stderr, "damaged") {
		t.Errorf("restore: stderr %q calls the archive damaged", r.stderr)
	}
	if got := listDir(t, dest); len(got) != 1 || got[0] != "ok.txt" {
		t.Errorf("restored %q, want only ok.txt", got)
	}
}

// TestRestoreModesOfForeignZips restores, as an unprivileged user under umask 027, entries
// that hold no Unix mode (DOS and Windows hosts, the JDK's jar) and a Unix folder stored as
// drw-rw-rw-: files come back 0640, folders 0750, nothing world-writable, and what the
// drw-rw-rw- folder holds can be read by its owner. list shows the modes before the umask.
func TestRestoreModesOfForeignZips(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name  string
		host  uint16
		attrs uint32
	}{
		{"win/", 0, 0x10}, {"win/a.txt", 0, 0x20}, {"ntfs.txt", 10, 0x20}, {"jar/", 0, 0}, {"jar/A.class", 0, 0},
		{"unix/", 3, (0o040000 | 0o666) << 16}, {"unix/inside.txt", 3, (0o100000 | 0o600) << 16},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store, CreatorVersion: e.host<<8 | 20, ExternalAttrs: e.attrs})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(e.name, "/") {
			w.Write([]byte("data"))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := sharedTempDir(t)
	path := filepath.Join(dir, "foreign.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "dest")
	cmd := exec.Command("sh", "-c", `umask 027 && exec "$0" "$@"`, binary, "restore", path, dest)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restore: %v: %s", err, out)
	}
	want := map[string]os.FileMode{"win": os.ModeDir | 0o750, "win/a.txt": 0o640, "ntfs.txt": 0o640,
		"jar": os.ModeDir | 0o750, "jar/A.class": 0o640, "unix": os.ModeDir | 0o766, "unix/inside.txt": 0o600}
	for name, mode := range want {
		if info, err := os.Lstat(filepath.Join(dest, name)); err != nil || info.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", name, info.Mode(), err, mode)
		}
	}
	read := exec.Command("cat", filepath.Join(dest, "unix/inside.txt"))
	read.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := read.CombinedOutput(); err != nil || string(out) != "data" {
		t.Errorf("its owner reads unix/inside.txt: %q, %v", out, err)
	}
	l := backup(t, runOpts{}, "list", "--long", path)
	for _, line := range []string{"drwxr-xr-x", "-rw-r--r--", "drwxrw-rw-"} {
		if !strings.Contains(l.stdout, line) {
			t.Errorf("list --long: %q, want a %s line", l.stdout, line)
		}
	}
	if strings.Contains(l.stdout, "rw-rw-rw-") || strings.Contains(l.stdout, "rwxrwxrwx") {
		t.Errorf("list --long: %q shows world-writable modes", l.stdout)
	}
}
