package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackDosTimeIsLocal: an entry dated by its MS-DOS date and time alone, as Python's
// zipfile, the JDK's jar and Windows' own zip writer store it, holds the local time of the
// host that made it. unzip, bsdtar, 7-Zip and Python read it so; backup took it as UTC, so
// under TZ=EST5 a file unzip dates 17:00 UTC came back dated 12:00 UTC, five hours early,
// and list showed it so.
func TestAttackDosTimeIsLocal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "py.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// 2024-06-01 12:00:00, with no extended timestamp beside it.
	fh := &zip.FileHeader{Name: "app/f.txt", Method: zip.Deflate,
		ModifiedDate: 1 + 6<<5 + (2024-1980)<<9, ModifiedTime: 12 << 11}
	fh.SetMode(0o644)
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arch, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 6, 1, 17, 0, 0, 0, time.UTC)
	opts := runOpts{dir: dir, env: []string{"TZ=EST5"}}
	if r := backup(t, opts, "restore", arch, filepath.Join(dir, "dest")); r.code != 0 {
		t.Fatalf("restore: exit %d %q", r.code, r.stderr)
	}
	fi, err := os.Stat(filepath.Join(dir, "dest/app/f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(want) {
		t.Errorf("restored mtime %v; want %v (the DOS time in TZ=EST5)", fi.ModTime().UTC(), want)
	}
	l := backup(t, opts, "list", "--json", arch)
	if l.code != 0 || !strings.Contains(l.stdout, `"mtime": "2024-06-01T17:00:00Z"`) {
		t.Errorf("list --json: exit %d %s; want mtime 2024-06-01T17:00:00Z", l.code, l.stdout)
	}
}
