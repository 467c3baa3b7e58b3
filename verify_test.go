package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// backupOf creates dir/NAME.zip from a small tree at dir/app and returns its path.
func backupOf(t *testing.T, dir, name string) string {
	t.Helper()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{
		"a.txt":     {content: "alpha\n"},
		"sub/b.txt": {content: strings.Repeat("compressible text, ", 2000)},
		"empty":     {kind: "dir"},
	})
	out := filepath.Join(dir, name+".zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-o", out, "app"); r.code != exitComplete {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	return out
}

func TestVerifyGood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	r := backup(t, runOpts{dir: dir}, "verify", arch)
	want := "ok: 2 files, 37.1 KiB verified (status recorded at backup: complete); matches " + arch + ".receipt.json\n"
	if r.code != exitComplete || r.stdout != want || r.stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, want)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", "-q", arch); r.code != exitComplete || r.stdout+r.stderr != "" {
		t.Errorf("-q: exit %d, output %q; want 0 and nothing", r.code, r.stdout+r.stderr)
	}
	r = backup(t, runOpts{dir: dir}, "verify", "--json", arch)
	var got struct {
		OK             bool   `json:"ok"`
		Files          int    `json:"files"`
		Manifest       bool   `json:"manifest"`
		RecordedStatus string `json:"recorded_status"`
		ArchiveChecked bool   `json:"archive_checked"`
		Problems       []any  `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json output %q: %v", r.stdout, err)
	}
	if !got.OK || got.Files != 2 || !got.Manifest || got.RecordedStatus != "complete" || !got.ArchiveChecked || got.Problems == nil {
		t.Errorf("--json: %+v", got)
	}
	os.Remove(arch + ".receipt.json")
	r = backup(t, runOpts{dir: dir}, "verify", arch)
	if r.code != exitComplete || strings.Contains(r.stdout, "matches") {
		t.Errorf("without a receipt: exit %d, %q; want 0 and no receipt named", r.code, r.stdout)
	}
}

func TestVerifyForeignArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "foreign.zip")
	writeForeignZip(t, path, map[string]string{"x/a": "aaa", "x/b": "bbbb"})
	r := backup(t, runOpts{dir: dir}, "verify", path)
	want := "ok: 2 files, 7 B verified by CRC-32 only (no manifest: not made by backup)\n"
	if r.code != exitComplete || r.stdout != want {
		t.Errorf("exit %d stdout %q stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, want)
	}
}

// writeForeignZip writes files as another zip tool would: no manifest.
func writeForeignZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range keys(files) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[name]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedArchives damages an archive in each of the ways a disk or a transfer does:
// verify, list and restore each fail with one clear line naming the cause, never a panic.
// list reads only the directory and the manifest, so it cannot see a flipped byte in a
// file's data; verify and restore can.
func TestDamagedArchives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	goodArchive := backupOf(t, dir, "good")
	good := readFile(t, goodArchive)
	// The receipt of another archive of the same size: only the SHA-256 differs. (Another
	// real archive of the same size is hard to make since the manifest records inodes and
	// change times, whose digits vary.)
	sum := sha256.Sum256(good)
	otherReceipt := bytes.Replace(readFile(t, goodArchive+".receipt.json"),
		[]byte(hex.EncodeToString(sum[:])), []byte(strings.Repeat("0", 64)), 1)
	if bytes.Equal(otherReceipt, readFile(t, goodArchive+".receipt.json")) {
		t.Fatal("the receipt does not hold the archive's SHA-256")
	}
	cdir := bytes.Index(good, []byte("PK\x01\x02"))
	eocd := bytes.LastIndex(good, []byte("PK\x05\x06"))
	tests := []struct {
		name     string
		data     []byte
		receipt  []byte // written as ARCHIVE.receipt.json when set
		want     string // in verify's stderr
		listCode int
	}{
		{"flipped byte in a file", flipByte(t, good, "app/sub/b.txt"), nil, "app/sub/b.txt: ", exitComplete},
		{"flipped byte in the manifest", flipByte(t, good, ".backup-manifest.json"), nil, ".backup-manifest.json: ", exitFailed},
		{"truncated", good[:len(good)*2/3], nil, "not a zip archive", exitFailed},
		{"central directory cut", slices.Concat(good[:cdir], good[eocd:]), nil, "not a zip archive", exitFailed},
		{"receipt of another archive", good, otherReceipt, "does not match the receipt", exitComplete},
		{"random bytes", []byte(randomString(t, 10000)), nil, "not a zip archive", exitFailed},
		{"empty file", nil, nil, "not a zip archive", exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "a.zip")
			os.WriteFile(arch, tt.data, 0o644)
			if tt.receipt != nil {
				os.WriteFile(arch+".receipt.json", tt.receipt, 0o644)
			}
			r := backup(t, runOpts{dir: dir}, "verify", arch)
			checkFailure(t, "verify", r, exitFailed, tt.want)
			r = backup(t, runOpts{dir: dir}, "list", arch)
			checkFailure(t, "list", r, tt.listCode, "")
			r = backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			restoreCode := exitFailed
			if tt.receipt != nil {
				restoreCode = exitComplete // restore does not read receipts
			}
			checkFailure(t, "restore", r, restoreCode, "")
			if restoreCode == exitFailed {
				if got := listTree(t, filepath.Join(dir, "dest")); slices.Contains(got, "app/sub/b.txt") {
					t.Errorf("restore wrote the damaged file: %q", got)
				}
			}
		})
	}
}

func checkFailure(t *testing.T, cmd string, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d; stderr:\n%s", cmd, r.code, code, r.stderr)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("%s: stderr shows a panic:\n%s", cmd, r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("%s: stderr %q, want it to say %q", cmd, r.stderr, want)
	}
	if code == exitFailed && strings.Count(r.stderr, "backup "+cmd+":") != 1 {
		t.Errorf("%s: stderr %q, want one line that says backup %s: ...", cmd, r.stderr, cmd)
	}
}

func TestVerifyReceiptFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	os.WriteFile(filepath.Join(dir, "junk.json"), []byte("{not json"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"explicit and right", []string{"--receipt", arch + ".receipt.json"}, exitComplete, ""},
		{"missing", []string{"--receipt", filepath.Join(dir, "nope.json")}, exitFailed, "nope.json: no such file or directory"},
		{"not a receipt", []string{"--receipt", filepath.Join(dir, "junk.json")}, exitFailed, "junk.json: not a receipt"},
		{"usage: no archive", nil, exitUsage, "want one ARCHIVE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"verify"}, tt.args...)
			if tt.code != exitUsage {
				args = append(args, arch)
			}
			r := backup(t, runOpts{dir: dir}, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// flipByte flips a byte in the middle of the stored data of the named entry.
func flipByte(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			off, err := f.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			out := bytes.Clone(data)
			out[off+int64(f.CompressedSize64)/2] ^= 0x10
			return out
		}
	}
	t.Fatalf("no entry %s", name)
	return nil
}
