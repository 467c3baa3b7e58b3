package main

import (
	bin "encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// TestAttackUnicodePathField: an entry stored as app/good whose Info-ZIP Unicode Path extra
// field (0x7075, its checksum that of the stored name) says app/evil is extracted as
// app/evil by unzip and 7-Zip (from the central directory's field) and by bsdtar (from the
// local header's): backup verify said ok and restore wrote app/good, a name no other tool
// gives it, as with an archive of two central directories. Such a name means different
// paths to different tools: an unsafe name, refused with nothing written. A field whose
// checksum is not the name's is ignored by every tool, and so is one that repeats the name.
func TestAttackUnicodePathField(t *testing.T) {
	t.Parallel()
	evil := unicodePathField("app/good", "app/evil")
	tests := []struct {
		name           string
		local, central []byte
		refused        bool
	}{
		{"central field", nil, evil, true},
		{"local field", evil, nil, true},
		{"both", evil, evil, true},
		{"checksum of another name", nil, unicodePathField("app/other", "app/evil"), false},
		{"the same name", unicodePathField("app/good", "app/good"), unicodePathField("app/good", "app/good"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := filepath.Join(dir, "u.zip")
			writeOneEntryZip(t, arch, "app/good", tt.local, tt.central, []byte("hello\n"))
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			const reason = "Unicode Path field names it otherwise"
			if !tt.refused {
				if v.code != exitComplete || r.code != exitComplete {
					t.Errorf("verify exit %d %q, restore exit %d %q; want both 0", v.code, v.stderr, r.code, r.stderr)
				}
				return
			}
			if v.code != exitFailed || !strings.Contains(v.stderr, "app/good: ") || !strings.Contains(v.stderr, reason) {
				t.Errorf("verify: exit %d %q; want %d and app/good: %s", v.code, v.stderr, exitFailed, reason)
			}
			if r.code != exitFailed || !strings.Contains(r.stderr, reason) {
				t.Errorf("restore: exit %d %q; want %d and %s", r.code, r.stderr, exitFailed, reason)
			}
			if _, err := os.Lstat(filepath.Join(dir, "dest/app")); err == nil {
				t.Errorf("restore wrote dest/app; want nothing written")
			}
		})
	}
}

// unicodePathField is an Info-ZIP Unicode Path extra field (0x7075, version 1) giving name
// to the entry whose stored name is stored.
func unicodePathField(stored, name string) []byte {
	data := bin.LittleEndian.AppendUint32([]byte{1}, crc32.ChecksumIEEE([]byte(stored)))
	data = append(data, name...)
	field := bin.LittleEndian.AppendUint16(nil, 0x7075)
	field = bin.LittleEndian.AppendUint16(field, uint16(len(data)))
	return append(field, data...)
}

// writeOneEntryZip writes a zip of one stored file made on Unix, its local header's extra
// field local and its central record's central (Go's writer gives both the same).
func writeOneEntryZip(t *testing.T, path, name string, local, central, body []byte) {
	t.Helper()
	le16 := bin.LittleEndian.AppendUint16
	le32 := bin.LittleEndian.AppendUint32
	crc := crc32.ChecksumIEEE(body)
	lh := le32(nil, 0x04034b50)
	lh = le16(le16(le16(le16(le16(lh, 20), 0), 0), 0), 0x21) // version, flags, stored, time, date
	lh = le32(le32(le32(lh, crc), uint32(len(body))), uint32(len(body)))
	lh = le16(le16(lh, uint16(len(name))), uint16(len(local)))
	lh = append(append(append(lh, name...), local...), body...)
	cd := le32(nil, 0x02014b50)
	cd = le16(le16(le16(le16(le16(le16(cd, 3<<8|20), 20), 0), 0), 0), 0x21)
	cd = le32(le32(le32(cd, crc), uint32(len(body))), uint32(len(body)))
	cd = le16(le16(le16(le16(le16(cd, uint16(len(name))), uint16(len(central))), 0), 0), 0)
	cd = le32(le32(cd, 0o100644<<16), 0)
	cd = append(append(cd, name...), central...)
	end := le32(nil, 0x06054b50)
	end = le16(le16(le16(le16(end, 0), 0), 1), 1)
	end = le16(le32(le32(end, uint32(len(cd))), uint32(len(lh))), 0)
	if err := os.WriteFile(path, append(append(lh, cd...), end...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAttackUnicodePathFieldOnManifest: the same field on the manifest's central record,
// saying app/a.txt: unzip -o extracts the manifest's JSON over app/a.txt (7-Zip too), while
// backup verify said ok and restore wrote app/a.txt's own bytes, exit 0: the manifest was
// not checked for a second name, only the other entries.
func TestAttackUnicodePathFieldOnManifest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "alpha\n"}})
	arch := filepath.Join(dir, "u.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	b := readFile(t, arch)
	recs, eocd := centralRecs(t, b)
	m := recs[len(recs)-1]
	if m.name != ".backup-manifest.json" || m.at+46+len(m.name)+int(bin.LittleEndian.Uint16(b[m.at+30:])) != eocd {
		t.Fatalf("last central record %q does not end the directory", m.name)
	}
	field := unicodePathField(m.name, "app/a.txt")
	bin.LittleEndian.PutUint16(b[m.at+30:], bin.LittleEndian.Uint16(b[m.at+30:])+uint16(len(field)))
	bin.LittleEndian.PutUint32(b[eocd+12:], bin.LittleEndian.Uint32(b[eocd+12:])+uint32(len(field)))
	b = append(b[:eocd:eocd], append(field, b[eocd:]...)...)
	if err := os.WriteFile(arch, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(format.ReceiptPath(arch)); err != nil { // it gives the old size
		t.Fatal(err)
	}
	const reason = "Unicode Path field names it otherwise"
	for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, reason) {
			t.Errorf("%s: exit %d %q; want %d and %s", args[0], r.code, r.stderr, exitFailed, reason)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "dest/app")); err == nil {
		t.Errorf("restore wrote dest/app; want nothing written")
	}
}
