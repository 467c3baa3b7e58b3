package main

import (
	"archive/zip"
	"bytes"
	bin "encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackExtraFieldOverflow: an entry whose extra field holds a field (an Info-ZIP ux
// one) that says it is 50 bytes long where 2 remain. In the central record, Python's
// zipfile refuses to open the archive ("Corrupt extra field") and bsdtar fails; in the
// local header, unzip -t fails ("EF block length (50 bytes) exceeds remaining EF data")
// and so does bsdtar. verify said ok and restore complete, exit 0 (hostile-archive pass).
func TestAttackExtraFieldOverflow(t *testing.T) {
	t.Parallel()
	field := bin.LittleEndian.AppendUint16(nil, 0x7875)
	field = append(bin.LittleEndian.AppendUint16(field, 50), 1, 4)
	for _, tt := range []struct {
		name  string
		local bool
		want  string
	}{
		{"central record", false, "backup verify: %s: damaged: the central record of a.txt has an extra field of 50 bytes where 2 remain, which Python's zipfile and bsdtar refuse"},
		{"local header", true, "a.txt: damaged: its local header has an extra field of 50 bytes where 2 remain, which unzip -t and bsdtar refuse"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "extra.zip")
			writeExtraZip(t, arch, field, tt.local)
			want := tt.want
			if !tt.local {
				want = strings.Replace(want, "%s", arch, 1)
			}
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, want+"\n") {
				t.Errorf("verify: exit %d %q; want %d and %q", v.code, v.stderr, exitFailed, want)
			}
			r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			if r.code != exitFailed {
				t.Errorf("restore: exit %d %q; want %d", r.code, r.stderr, exitFailed)
			}
			if _, err := os.Lstat(filepath.Join(dir, "dest/a.txt")); err == nil {
				t.Error("restore wrote a.txt; want it not written")
			}
		})
	}
}

// writeExtraZip writes a zip of a.txt whose central record (or local header, with local)
// carries extra as its extra field, and the other header none.
func writeExtraZip(t *testing.T, path string, extra []byte, local bool) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	fh := &zip.FileHeader{Name: "a.txt", Method: zip.Store, Extra: extra}
	fh.SetMode(0o644)
	w, err := zw.CreateHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	// Go's writer puts extra in both headers: the other one's is cut out, its length made 0.
	cut := func(at, lenAt int) []byte {
		bin.LittleEndian.PutUint16(b[lenAt:], 0)
		return append(b[:at:at], b[at+len(extra):]...)
	}
	cd := bytes.Index(b, []byte("PK\x01\x02"))
	if local {
		b = cut(cd+46+len("a.txt"), cd+30)
		eocd := bytes.LastIndex(b, []byte("PK\x05\x06"))
		bin.LittleEndian.PutUint32(b[eocd+12:], bin.LittleEndian.Uint32(b[eocd+12:])-uint32(len(extra)))
	} else {
		b = cut(30+len("a.txt"), 28)
		cd -= len(extra)
		bin.LittleEndian.PutUint32(b[cd+42:], 0)
		eocd := bytes.LastIndex(b, []byte("PK\x05\x06"))
		bin.LittleEndian.PutUint32(b[eocd+16:], bin.LittleEndian.Uint32(b[eocd+16:])-uint32(len(extra)))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
