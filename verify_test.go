package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	bin "encoding/binary"
	le "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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

// centralRecRecords walks the central directory of the zip b: for each record its offset in
// b, its name and the offset of its local header.
type centralRec struct {
	at, local int
	name      string
}

func centralRecs(t *testing.T, b []byte) (recs []centralRec, eocd int) {
	t.Helper()
	eocd = bytes.LastIndex(b, []byte("PK\x05\x06"))
	if eocd < 0 {
		t.Fatal("no end record")
	}
	size := int(le.LittleEndian.Uint32(b[eocd+12:]))
	off := int(le.LittleEndian.Uint32(b[eocd+16:]))
	for p := off; p < off+size; {
		n := int(le.LittleEndian.Uint16(b[p+28:]))
		x := int(le.LittleEndian.Uint16(b[p+30:]))
		c := int(le.LittleEndian.Uint16(b[p+32:]))
		recs = append(recs, centralRec{at: p, local: int(le.LittleEndian.Uint32(b[p+42:])), name: string(b[p+46 : p+46+n])})
		p += 46 + n + x + c
	}
	return recs, eocd
}

// localExtraOf returns the local header extra field of the entry name in b (a slice of b:
// writing to it edits the archive).
func localExtraOf(t *testing.T, b []byte, name string) []byte {
	t.Helper()
	recs, _ := centralRecs(t, b)
	for _, r := range recs {
		if r.name == name {
			n := int(le.LittleEndian.Uint16(b[r.local+26:]))
			x := int(le.LittleEndian.Uint16(b[r.local+28:]))
			return b[r.local+30+n : r.local+30+n+x]
		}
	}
	t.Fatalf("no entry %q", name)
	return nil
}

// insertLocalOnly inserts, before the local header of the entry before, a whole local
// entry (header and data) of name holding body that the central directory does not list,
// and moves every offset after it.
func insertLocalOnly(t *testing.T, b []byte, before, name, body string) []byte {
	t.Helper()
	var one bytes.Buffer
	zw := zip.NewWriter(&one)
	fh := &zip.FileHeader{Name: name, Method: zip.Store}
	fh.SetMode(0o755)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(body)),
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body)), CreatorVersion: fh.CreatorVersion, ExternalAttrs: fh.ExternalAttrs})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(body))
	zw.Close()
	ob := one.Bytes()
	orecs, _ := centralRecs(t, ob)
	hidden := ob[:orecs[0].at]

	recs, eocd := centralRecs(t, b)
	at := -1
	for _, r := range recs {
		if r.name == before {
			at = r.local
		}
	}
	if at < 0 {
		t.Fatalf("no entry %q", before)
	}
	out := bytes.Clone(b)
	for _, r := range recs {
		if r.local >= at {
			le.LittleEndian.PutUint32(out[r.at+42:], uint32(r.local+len(hidden)))
		}
	}
	cd := int(le.LittleEndian.Uint32(out[eocd+16:]))
	le.LittleEndian.PutUint32(out[eocd+16:], uint32(cd+len(hidden)))
	return append(append(append([]byte{}, out[:at]...), hidden...), out[at:]...)
}

// TestAttackVerifyPassesLocalOwnerLie: an archive backup made of a setuid file owned by
// nobody (65534), with only the local header's Info-ZIP "ux" field edited to say uid 0, gid
// 0 (the central directory and the manifest still say 65534). verify reports ok, although
// unzip -X -K and bsdtar -p (which read the owner from the local header) restore it as a
// root-owned setuid file. verify promises that every entry's owner in its ux field is the
// one the manifest records and that the local header agrees with the central directory;
// the correct behaviour is a problem for the entry (exit 1), as for any other field in
// which the two headers disagree.
func TestAttackVerifyPassesLocalOwnerLie(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"tool": {content: "#!/bin/sh\nid\n"}})
	tool := filepath.Join(dir, "app/tool")
	if err := os.Chown(tool, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	syscall.Chmod(tool, 0o4755)
	arch := filepath.Join(dir, "u.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "app"), exitComplete)
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	extra := localExtraOf(t, b, "app/tool")
	i := bytes.Index(extra, []byte("ux\x0b\x00\x01\x04"))
	if i < 0 {
		t.Fatalf("no ux field in the local header: %x", extra)
	}
	le.LittleEndian.PutUint32(extra[i+6:], 0)
	le.LittleEndian.PutUint32(extra[i+11:], 0)
	edited := filepath.Join(dir, "edited.zip") // no receipt: the manifest is all there is
	os.WriteFile(edited, b, 0o600)
	r := backup(t, runOpts{dir: dir}, "verify", edited)
	if r.code != exitFailed || !strings.Contains(r.stderr, "app/tool") {
		t.Errorf("verify of an archive whose local header gives app/tool to root: exit %d stdout %q stderr %q; want exit 1 naming app/tool", r.code, r.stdout, r.stderr)
	}
	if _, err := exec.LookPath("bsdtar"); err == nil {
		out := filepath.Join(dir, "bsdtar")
		os.Mkdir(out, 0o755)
		if err := exec.Command("bsdtar", "-xpf", edited, "-C", out).Run(); err == nil {
			var st syscall.Stat_t
			if syscall.Stat(filepath.Join(out, "app/tool"), &st) == nil {
				t.Logf("bsdtar -p restores app/tool as uid %d, mode %o", st.Uid, st.Mode&0o7777)
			}
		}
	}
}

// TestAttackVerifyPassesHiddenLocalEntry: a whole local entry (header and data,
// app/evil.sh) inserted between two entries of an archive backup made, not listed in the
// central directory, every offset moved to match. verify reports ok (no receipt: the
// manifest is all there is), yet a streaming reader (libarchive's, as `curl … | bsdtar -x`
// uses it, or Java's ZipInputStream) extracts app/evil.sh, a file the manifest does not
// list: the archive means different things to different tools, which is what verify's
// local-header checks exist to catch. The correct behaviour is a problem (exit 1): bytes
// between entries, or between the last entry and the central directory, that no entry
// covers (at least a local header signature there). The same holds for a stored entry
// whose data descriptor a streaming reader finds early (a fake one inside the data).
func TestAttackVerifyPassesHiddenLocalEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.zip")
	os.WriteFile(edited, insertLocalOnly(t, b, "app/sub/", "app/evil.sh", "#!/bin/sh\nrm -rf ~\n"), 0o600)
	r := backup(t, runOpts{dir: dir}, "verify", edited)
	if r.code != exitFailed {
		t.Errorf("verify of an archive with a hidden local entry: exit %d stdout %q stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}
	if _, err := exec.LookPath("bsdtar"); err == nil {
		out := filepath.Join(dir, "bsdtar")
		os.Mkdir(out, 0o755)
		cmd := exec.Command("bsdtar", "-xf", "-", "-C", out)
		f, _ := os.Open(edited)
		defer f.Close()
		cmd.Stdin = struct{ *os.File }{f} // a pipe, not a seekable file
		if cmd.Run() == nil {
			if _, err := os.Stat(filepath.Join(out, "app/evil.sh")); err == nil {
				t.Logf("bsdtar reading it from a pipe extracts app/evil.sh")
			}
		}
	}
}

// putLE writes each value of vs, little-endian, to b.
func putLE(b *bytes.Buffer, vs []any) {
	for _, v := range vs {
		if err := le.Write(b, le.LittleEndian, v); err != nil {
			panic(err)
		}
	}
}

// overlapZip is a zip of two stored entries that overlap: a.txt's data is b.txt's whole
// local entry (header and data), and the central directory lists both. Chained (each
// entry's data quoting the next entry's header, as in David Fifield's "better zip bomb"),
// 46 KB of such entries expand to 4.5 PB.
func overlapZip() []byte {
	local := func(name string, data []byte) []byte {
		var b bytes.Buffer
		putLE(&b, []any{uint32(0x04034b50), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0x21),
			crc32.ChecksumIEEE(data), uint32(len(data)), uint32(len(data)), uint16(len(name)), uint16(0)})
		b.WriteString(name)
		b.Write(data)
		return b.Bytes()
	}
	central := func(name string, data []byte, off int) []byte {
		var b bytes.Buffer
		putLE(&b, []any{uint32(0x02014b50), uint16(0x031e), uint16(20), uint16(0), uint16(0), uint16(0), uint16(0x21),
			crc32.ChecksumIEEE(data), uint32(len(data)), uint32(len(data)), uint16(len(name)), uint16(0), uint16(0), uint16(0), uint16(0),
			uint32(0o100644 << 16), uint32(off)})
		b.WriteString(name)
		return b.Bytes()
	}
	db := []byte("inner data\n")
	lb := local("b.txt", db)
	la := local("a.txt", lb)
	cd := append(central("a.txt", lb, 0), central("b.txt", db, 30+len("a.txt"))...)
	var eocd bytes.Buffer
	putLE(&eocd, []any{uint32(0x06054b50), uint16(0), uint16(0), uint16(2), uint16(2), uint32(len(cd)), uint32(len(la)), uint16(0)})
	return append(append(la, cd...), eocd.Bytes()...)
}

// TestAttackOverlappingEntriesPass: an archive whose entries overlap (b.txt's local entry
// lies inside a.txt's data) is the building block of the non-recursive zip bomb. unzip -t
// refuses it ("invalid zip file with overlapped components (possible zip bomb)", exit 12);
// backup verify says ok and restore writes both (exit 0), so an archive of a few KB that
// overlaps its entries a thousand times over is restored until the disk is full. verify
// promises the zip structure is checked as unzip -t checks it. Correct behaviour: verify
// reports the overlapping entries (exit 1), and restore lists them as damaged and does not
// write them (or refuses the archive).
func TestAttackOverlappingEntriesPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := filepath.Join(dir, "ov.zip")
	os.WriteFile(arch, overlapZip(), 0o644)
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed {
		t.Errorf("verify of overlapping entries: exit %d stdout %q stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest")); r.code == exitComplete {
		t.Errorf("restore of overlapping entries: exit 0, %q; want them refused or damaged", r.stderr)
	}
	if _, err := exec.LookPath("unzip"); err == nil {
		out, err := exec.Command("unzip", "-t", arch).CombinedOutput()
		t.Logf("unzip -t: %v\n%s", err, out)
	}
}

// rawEntry is one stored entry of a zip written byte by byte: its local and central extra
// fields may differ, as other tools' do.
type rawEntry struct {
	name               string
	data               string
	localExtra, cExtra []byte
}

// rawZip writes a zip of stored entries, each a regular file of mode 0644 made on Unix,
// dated 2025-01-01 00:00 in MS-DOS time.
func rawZip(t *testing.T, path string, entries []rawEntry) {
	t.Helper()
	le16 := bin.LittleEndian.AppendUint16
	le32 := bin.LittleEndian.AppendUint32
	var out, cd []byte
	const dosTime, dosDate = 0, 0x5a21
	for _, e := range entries {
		crc := crc32.ChecksumIEEE([]byte(e.data))
		off := uint32(len(out))
		out = le32(out, 0x04034b50)
		out = le16(le16(le16(le16(le16(out, 10), 0), 0), dosTime), dosDate)
		out = le32(le32(le32(out, crc), uint32(len(e.data))), uint32(len(e.data)))
		out = le16(le16(out, uint16(len(e.name))), uint16(len(e.localExtra)))
		out = append(append(append(out, e.name...), e.localExtra...), e.data...)
		cd = le32(cd, 0x02014b50)
		cd = le16(le16(le16(le16(le16(le16(cd, 0x031e), 10), 0), 0), dosTime), dosDate)
		cd = le32(le32(le32(cd, crc), uint32(len(e.data))), uint32(len(e.data)))
		cd = le16(le16(le16(le16(le16(cd, uint16(len(e.name))), uint16(len(e.cExtra))), 0), 0), 0)
		cd = le32(le32(cd, 0o100644<<16), off)
		cd = append(append(cd, e.name...), e.cExtra...)
	}
	end := le32(nil, 0x06054b50)
	end = le16(le16(le16(le16(end, 0), 0), uint16(len(entries))), uint16(len(entries)))
	end = le16(le32(le32(end, uint32(len(cd))), uint32(len(out))), 0)
	if err := os.WriteFile(path, append(append(out, cd...), end...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// extraField is one field of a zip extra block.
func extraField(id uint16, data []byte) []byte {
	b := bin.LittleEndian.AppendUint16(nil, id)
	b = bin.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// TestAttackVerifyRejectsZip2UnixField: Info-ZIP zip 2.x (the zip of every Unix before
// 2008, still what many old archives hold) writes its "Ux" field (0x7855) with the uid and
// gid in the local header and, as Info-ZIP's extrafld.txt specifies, EMPTY in the central
// header ("the central-header version has no data: it only flags that the local header
// holds UID/GID"). The old "UX" field (0x5855) likewise has atime, mtime, uid, gid locally
// and only the two times centrally. The new local-header owner check reads both fields in
// the local header but only "ux" in the central record, so it calls each such sound
// archive damaged ("local header gives owner 1000:1000, the central directory none"),
// exit 1, and restore refuses to write its files, while unzip -t and bsdtar read it.
// Correct: a Ux/UX field whose central version holds no owner by specification is not a
// disagreement (compare only owners both records can hold, or take the central owner of
// these fields from the local one as unzip does), so verify exits 0 and restore writes it.
func TestAttackVerifyRejectsZip2UnixField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := bin.LittleEndian.AppendUint16(bin.LittleEndian.AppendUint16(nil, 1000), 1000)
	now := uint32(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	times := bin.LittleEndian.AppendUint32(bin.LittleEndian.AppendUint32(nil, now), now)
	for name, e := range map[string]rawEntry{
		"Ux": {name: "a.txt", data: "hello\n", localExtra: extraField(0x7855, ids), cExtra: extraField(0x7855, nil)},
		"UX": {name: "a.txt", data: "hello\n", localExtra: extraField(0x5855, append(times, ids...)), cExtra: extraField(0x5855, times)},
	} {
		arch := filepath.Join(dir, name+".zip")
		rawZip(t, arch, []rawEntry{e})
		verifiesAsUnzip(t, arch, "a zip 2.x archive with its "+name+" field")
		dest := filepath.Join(dir, "dest-"+name)
		r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
		if _, err := os.Stat(filepath.Join(dest, "a.txt")); r.code != exitComplete || err != nil {
			t.Errorf("restore of a zip 2.x archive with its %s field: exit %d, %s, a.txt: %v; want 0 and a.txt written", name, r.code, r.stderr, err)
		}
	}
}

// TestAttackVerifyRejectsJarDirectory: `jar cf` (the JDK's own tool; every .jar built
// without -M) writes its first entry, META-INF/, deflated: the empty deflate stream, 2
// bytes of compressed data for 0 bytes. unzip -t, Python, Go's archive/zip and bsdtar read
// it; verify calls it "damaged: not a valid zip entry, or more data than its header
// declares" (exit 1) because a directory entry's compressed size is not 0, and restore
// lists it as damaged. Correct: a folder entry whose data inflate to 0 bytes with CRC 0 is
// sound: verify exits 0.
func TestAttackVerifyRejectsJarDirectory(t *testing.T) {
	t.Parallel()
	jar, err := exec.LookPath("jar")
	if err != nil {
		t.Skip("no jar")
	}
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "d"), map[string]node{"a.txt": {content: "hello\n"}})
	arch := filepath.Join(dir, "a.jar")
	cmd := exec.Command(jar, "cf", arch, "d")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jar: %v %s", err, out)
	}
	verifiesAsUnzip(t, arch, "jar cf's archive")
}

// TestAttackVerifyMissesPKWareUnixOwner: the local header of a.txt holds PKWARE's Unix
// extra field (0x000d: atime, mtime, uid, gid), which Info-ZIP unzip reads: `unzip -X`
// restores a.txt owned by 1234:1234 and dated from that field's mtime (2030), while the
// central record gives no owner and the MS-DOS time 2025-01-01. Verify, whose new check is
// that "a local header must give what extractors restore from it as the central record
// does: the owner ... and the modification time", passes it (exit 0): 0x000d is not one of
// the fields it reads. Correct: the owner and mtime of a local 0x000d field count as the
// ux/UX/Ux ones do, so verify reports a.txt damaged (exit 1).
func TestAttackVerifyMissesPKWareUnixOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	when := uint32(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	f := bin.LittleEndian.AppendUint32(bin.LittleEndian.AppendUint32(nil, when), when)
	f = bin.LittleEndian.AppendUint16(bin.LittleEndian.AppendUint16(f, 1234), 1234)
	arch := filepath.Join(dir, "pk.zip")
	rawZip(t, arch, []rawEntry{{name: "a.txt", data: "hello\n", localExtra: extraField(0x000d, f)}})
	// What unzip -X restores from it.
	x := filepath.Join(dir, "x")
	os.Mkdir(x, 0o755)
	cmd := exec.Command("unzip", "-qX", arch)
	cmd.Dir = x
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unzip -X: %v %s", err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(x, "a.txt"), &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("unzip -X restored a.txt as %d:%d, mtime %s", st.Uid, st.Gid, time.Unix(st.Mtim.Sec, 0).UTC())
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed || !strings.Contains(r.stdout+r.stderr, "a.txt: damaged") {
		t.Errorf("verify of an entry whose local header gives unzip owner %d:%d and another mtime than its central record: exit %d, %s; want 1, a.txt damaged", st.Uid, st.Gid, r.code, r.stdout+r.stderr)
	}
}

// TestAttackVerifyRejectsZip64DescriptorOfEmptyFile: Python's zipfile, writing to a pipe
// (no seek) an entry opened with force_zip64=True (as it does for any entry it cannot size
// beforehand and is told may be large), follows the data with a zip64 data descriptor:
// signature, CRC-32, and 8-byte sizes. For an empty file those are 24 bytes whose first 16
// also read as a descriptor with 4-byte sizes (CRC 0, sizes 0, 0), the form
// checkDescriptor tries first: verify then thinks the entry ends 8 bytes early and
// reports the next entry "damaged: 8 bytes before its local header that no entry covers"
// (exit 1), while unzip -t, Python and Go read the archive. Correct: a descriptor form is
// taken only where the next entry (or the central directory) starts after it, or the
// 8-byte form when the local header has a zip64 field, as Info-ZIP does: verify exits 0.
func TestAttackVerifyRejectsZip64DescriptorOfEmptyFile(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	arch := filepath.Join(dir, "py.zip")
	script := `
import zipfile, io, sys
class Pipe(io.RawIOBase):
    def __init__(s): s.b = bytearray()
    def writable(s): return True
    def write(s, b): s.b += b; return len(b)
p = Pipe()
with zipfile.ZipFile(p, 'w', zipfile.ZIP_DEFLATED) as z:
    with z.open('empty', 'w', force_zip64=True) as w: pass
    with z.open('b.txt', 'w') as w: w.write(b'abc')
open(sys.argv[1], 'wb').write(p.b)
`
	if out, err := exec.Command(py, "-c", script, arch).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v %s", err, out)
	}
	verifiesAsUnzip(t, arch, "Python's streamed zip64 archive with an empty file")
}

// TestAttackVerifyMissesTruncatedUxOwner: a.txt's local header holds a ux field cut
// short in its gid (uid of 4 bytes = 1234, then a gid size of 4 with only 2 bytes left);
// the central record has no owner. Verify's local reader drops the whole field as no
// owner, so the local header "agrees" and verify exits 0; but `unzip -X` restores a.txt as
// uid 1234 (gid read past the field) and `bsdtar -p` as 1234:0: the local header gives
// them an owner the central directory does not. Correct: a ux field that gives a uid, or
// any ux/UX/Ux field that cannot be read whole, in a local header whose central record
// has none (or another), is damage: verify exits 1 with a.txt damaged.
func TestAttackVerifyMissesTruncatedUxOwner(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	dir := t.TempDir()
	ux := append([]byte{1, 4}, bin.LittleEndian.AppendUint32(nil, 1234)...)
	ux = append(ux, 4, 0, 0)
	arch := filepath.Join(dir, "t.zip")
	rawZip(t, arch, []rawEntry{{name: "a.txt", data: "hello\n", localExtra: extraField(0x7875, ux)}})
	x := filepath.Join(dir, "x")
	os.Mkdir(x, 0o755)
	cmd := exec.Command("unzip", "-qX", arch)
	cmd.Dir = x
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unzip -X: %v %s", err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(x, "a.txt"), &st); err != nil {
		t.Fatal(err)
	}
	if r := backup(t, runOpts{dir: dir}, "verify", arch); r.code != exitFailed {
		t.Errorf("verify of a local header whose cut ux field gives unzip -X uid %d (central: no owner): exit %d, %s; want 1, a.txt damaged", st.Uid, r.code, r.stdout+r.stderr)
	}
}

// TestAttackVerifyMissesSecondDirectoryInZip64End: a backup archive of app/a.txt
// ("good") has bytes spliced between its central directory and its end record: a local
// entry app/a.txt with other bytes ("EVIL!"), a central directory that lists only it, a
// zip64 end record pointing at that directory, and a zip64 locator. The classic end
// record is left as it was (no field maxed out), so backup (and Go) read the first
// directory; Python's zipfile and libarchive (bsdtar on a file) take the zip64 end record
// whenever its locator precedes the end record, and read the second: `bsdtar -xOf` and
// `zipfile.read` give "EVIL!". Verify, whose new check is that the entries lie end to end
// up to the central directory so that no other tool finds an entry it does not list,
// passes it (exit 0): the bytes after the directory it read, up to the end record, are
// never looked at. Correct: the central directory must end where the end records start
// (a zip64 end record and locator where present, and they must agree with the classic
// one): verify exits 1.
func TestAttackVerifyMissesSecondDirectoryInZip64End(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "good\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	b, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	eocd := len(b) - 22
	if bin.LittleEndian.Uint32(b[eocd:]) != 0x06054b50 {
		t.Fatal("end record not at the end")
	}
	le16 := bin.LittleEndian.AppendUint16
	le32 := bin.LittleEndian.AppendUint32
	le64 := bin.LittleEndian.AppendUint64
	const evil = "EVIL!"
	name := "app/a.txt"
	crc := crc32.ChecksumIEEE([]byte(evil))
	h := uint64(eocd)
	var add []byte
	add = le32(add, 0x04034b50)
	add = le16(le16(le16(le16(le16(add, 10), 0), 0), 0), 0x5a21)
	add = le32(le32(le32(add, crc), uint32(len(evil))), uint32(len(evil)))
	add = le16(le16(add, uint16(len(name))), 0)
	add = append(append(add, name...), evil...)
	cdB := uint64(eocd + len(add))
	var cd []byte
	cd = le32(cd, 0x02014b50)
	cd = le16(le16(le16(le16(le16(le16(cd, 0x031e), 10), 0), 0), 0), 0x5a21)
	cd = le32(le32(le32(cd, crc), uint32(len(evil))), uint32(len(evil)))
	cd = le16(le16(le16(le16(le16(cd, uint16(len(name))), 0), 0), 0), 0)
	cd = le32(le32(cd, 0o100644<<16), uint32(h))
	cd = append(cd, name...)
	add = append(add, cd...)
	z64 := uint64(eocd + len(add))
	add = le32(add, 0x06064b50)
	add = le64(add, 44)
	add = le16(le16(add, 45), 45)
	add = le32(le32(add, 0), 0)
	add = le64(le64(le64(le64(add, 1), 1), uint64(len(cd))), cdB)
	add = le32(le32(add, 0x07064b50), 0)
	add = le32(le64(add, z64), 1)
	spliced := append(append(append([]byte{}, b[:eocd]...), add...), b[eocd:]...)
	if err := os.WriteFile(arch, spliced, 0o644); err != nil {
		t.Fatal(err)
	}
	// The archive alone, as when it is copied somewhere or handed on (its receipt, which
	// records its size, is optional to verify).
	os.Remove(arch + ".receipt.json")
	if out, err := exec.Command("bsdtar", "-xOf", arch, name).Output(); err == nil {
		t.Logf("bsdtar -xOf reads %s as %q", name, out)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		out, _ := exec.Command(py, "-c", "import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).namelist(), zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))", arch, name).CombinedOutput()
		t.Logf("python zipfile reads %s", out)
	}
	r := backup(t, runOpts{dir: dir}, "verify", arch)
	t.Logf("verify: exit %d %s", r.code, r.stdout+r.stderr)
	if r.code != exitFailed {
		t.Errorf("verify of an archive whose zip64 end record names a second directory (another %s): exit %d, %s; want 1", name, r.code, r.stdout+r.stderr)
	}
}

// verifiesAsUnzip checks that another tool's archive, which unzip -t passes, passes backup
// verify too (exit 0): what is sound must not be called damaged.
func verifiesAsUnzip(t *testing.T, arch, what string) {
	t.Helper()
	if out, err := exec.Command("unzip", "-tq", arch).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t %s: %v %s", what, err, out)
	}
	if r := backup(t, runOpts{}, "verify", arch); r.code != exitComplete {
		t.Errorf("verify of %s: exit %d, %s; want 0 (a sound archive)", what, r.code, r.stderr+r.stdout)
	}
}
