package main

import (
	"bytes"
	bin "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The archives of these tests are backup's own, changed afterwards the way a damaged disk or
// someone with write access to the archive changes them, with no receipt beside them (a
// receipt's SHA-256 of the whole archive would catch any change): verify is then all that
// stands between the change and a restore that gives something else than what was backed up.

// centralRecordAt is the offset in data of the central directory record of the entry name.
func centralRecordAt(t *testing.T, data []byte, name string) int {
	t.Helper()
	for off := 0; ; off++ {
		i := bytes.Index(data[off:], []byte("PK\x01\x02"))
		if i < 0 {
			t.Fatalf("no central record for %s", name)
		}
		off += i
		n := int(bin.LittleEndian.Uint16(data[off+28:]))
		if off+46+n <= len(data) && string(data[off+46:off+46+n]) == name {
			return off
		}
	}
}

// mutateArchive backs up a tree of a folder, app/sub/, and a file, app/sub/f.txt, of mode
// 0600, with no receipt kept, and returns the archive's path and bytes for the test to change.
func mutateArchive(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{
		"sub":       {kind: "dir", mode: 0o755},
		"sub/f.txt": {content: "secret\n", mode: 0o600},
	})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), 0)
	if err := os.Remove(arch + ".receipt.json"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	return arch, data
}

// TestAttackDirUnknownMethod: the folder entry app/sub/ of a backup's archive given the
// method 14 (LZMA), in its local header and its central record alike. It holds no data, so
// backup read nothing and verify said ok; unzip -t skips it (unsupported compression method
// 14) and exits 81, as it does for a file of that method, which verify reports. A folder's
// method is checked as a file's is.
func TestAttackDirUnknownMethod(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch, data := mutateArchive(t, dir)
	c := centralRecordAt(t, data, "app/sub/")
	l := int(bin.LittleEndian.Uint32(data[c+42:]))
	bin.LittleEndian.PutUint16(data[c+10:], 14)
	bin.LittleEndian.PutUint16(data[l+8:], 14)
	if err := os.WriteFile(arch, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const reason = "app/sub/: unsupported compression method 14 (LZMA)"
	v := backup(t, runOpts{dir: dir}, "verify", arch)
	if v.code != exitFailed || !strings.Contains(v.stderr, reason) {
		t.Errorf("verify: exit %d, %q%q; want %d and %q", v.code, v.stdout, v.stderr, exitFailed, reason)
	}
	r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
	if r.code != exitFailed || !strings.Contains(r.stderr, "unsupported compression method 14") {
		t.Errorf("restore: exit %d, %q; want %d and the method named", r.code, r.stderr, exitFailed)
	}
}

// TestAttackEndRecordSpansDisks: the end of central directory record of a backup's archive
// given a disk number of 1, or one entry fewer on "this disk" than in all, as a split archive
// has. Go's reader ignores those fields, so verify said ok and restore wrote the tree; unzip
// -t takes the archive for the last part of a split one (a warning, exit 1), and 7-Zip asks
// for the missing volume (disk number) or reports a headers error (count) and extracts
// nothing. Every tool must read an archive alike, or it is damaged.
func TestAttackEndRecordSpansDisks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		field int // offset in the end record
		delta int
	}{
		{"disk number", 4, 1},
		{"entries on this disk", 8, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			end := bytes.LastIndex(data, []byte("PK\x05\x06"))
			v := bin.LittleEndian.Uint16(data[end+tt.field:])
			bin.LittleEndian.PutUint16(data[end+tt.field:], uint16(int(v)+tt.delta))
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
				r := backup(t, runOpts{dir: dir}, args...)
				if r.code != exitFailed || !strings.Contains(r.stderr, "damaged") || !strings.Contains(r.stderr, "disks") {
					t.Errorf("%s: exit %d, %q%q; want %d and the archive damaged, split over disks", args[0], r.code, r.stdout, r.stderr, exitFailed)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "dest/app")); err == nil {
				t.Errorf("restore wrote dest/app; want nothing written")
			}
		})
	}
}

// TestAttackModeNotCovered: a backup's archive whose central record gives app/sub/f.txt, a
// file of mode 0600, the mode 0644, or says it was made on MS-DOS (host 0, whose entries
// restore gives the default 0644), or gives the folder app/sub/ 0777 instead of 0755. A mode
// is in the central record only (no local header repeats it) and the manifest did not record
// it, so nothing was compared with it: one flipped bit made verify say ok and restore give
// everyone read access to a private file (or write access to a folder), exit 0. The manifest
// records each entry's mode now, and an entry whose mode is not the recorded one is damaged.
func TestAttackModeNotCovered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, entry string
		change      func(rec []byte)
	}{
		{"file mode", "app/sub/f.txt", func(rec []byte) { bin.LittleEndian.PutUint16(rec[40:], 0o100644) }},
		{"file host", "app/sub/f.txt", func(rec []byte) { rec[5] = 0 }},
		{"folder mode", "app/sub/", func(rec []byte) { bin.LittleEndian.PutUint16(rec[40:], 0o40777) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			tt.change(data[centralRecordAt(t, data, tt.entry):])
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, tt.entry+": ") || !strings.Contains(v.stderr, "mode") {
				t.Errorf("verify: exit %d, %q%q; want %d and %s: ...mode...", v.code, v.stdout, v.stderr, exitFailed, tt.entry)
			}
			dest := filepath.Join(dir, "dest")
			r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
			if r.code != exitFailed || !strings.Contains(r.stderr, "mode") {
				t.Errorf("restore: exit %d, %q; want %d and the mode named", r.code, r.stderr, exitFailed)
			}
			for name, want := range map[string]os.FileMode{"app/sub/f.txt": 0o600, "app/sub": 0o755 | os.ModeDir} {
				if info, err := os.Lstat(filepath.Join(dest, name)); err == nil && info.Mode() != want {
					t.Errorf("restore made %s %v; want %v or nothing", name, info.Mode(), want)
				}
			}
		})
	}
}

// TestAttackVersionNeeded: the central record of the folder app/sub/ of a backup's archive
// says version 5.2 of the zip specification is needed to extract it (one bit of 2.0 flipped).
// Nothing backup reads depends on that field, so verify said ok and restore made the folder;
// unzip 6.0, which extracts up to version 4.6, skips the entry (need PK compat. v5.2) and
// exits 81, as it does for a file so marked.
func TestAttackVersionNeeded(t *testing.T) {
	t.Parallel()
	for _, entry := range []string{"app/sub/", "app/sub/f.txt"} {
		t.Run(entry, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			c := centralRecordAt(t, data, entry)
			data[c+6] |= 0x20 // 20 is 0x14: 52
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, entry+": ") || !strings.Contains(v.stderr, "5.2") {
				t.Errorf("verify: exit %d, %q%q; want %d and %s: ...5.2...", v.code, v.stdout, v.stderr, exitFailed, entry)
			}
			r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			if r.code != exitFailed || !strings.Contains(r.stderr, "5.2") {
				t.Errorf("restore: exit %d, %q; want %d and the version named", r.code, r.stderr, exitFailed)
			}
		})
	}
}

// TestAttackLocalFlagsDiffer: one bit of the general purpose flags of app/sub/f.txt flipped,
// in its local header or in its central record: bit 1 (a deflate option, meaningless for
// this stored entry) or bit 4 (reserved). verify compared only the bits that change what
// the bytes mean, said ok, and restore wrote the file; 7-Zip compares every bit but the
// data descriptor's, the UTF-8 flag of a name in ASCII, bit 15 and, for deflate, its options
// (bits 1 and 2), and fails the entry (Headers Error, exit 2). Every tool must read an entry
// alike, as for the other fields of a local header.
func TestAttackLocalFlagsDiffer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		local bool
		bit   uint
	}{
		{"local bit 1", true, 1},
		{"central bit 4", false, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			c := centralRecordAt(t, data, "app/sub/f.txt")
			at := c + 8
			if tt.local {
				at = int(bin.LittleEndian.Uint32(data[c+42:])) + 6
			}
			data[at] ^= 1 << tt.bit
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			const reason = "app/sub/f.txt: damaged: local header says flags"
			v := backup(t, runOpts{dir: dir}, "verify", arch)
			if v.code != exitFailed || !strings.Contains(v.stderr, reason) {
				t.Errorf("verify: exit %d, %q%q; want %d and %q", v.code, v.stdout, v.stderr, exitFailed, reason)
			}
			r := backup(t, runOpts{dir: dir}, "restore", arch, filepath.Join(dir, "dest"))
			if r.code != exitFailed || !strings.Contains(r.stderr, "local header says flags") {
				t.Errorf("restore: exit %d, %q; want %d and the flags named", r.code, r.stderr, exitFailed)
			}
			if _, err := os.Lstat(filepath.Join(dir, "dest/app/sub/f.txt")); err == nil {
				t.Errorf("restore wrote app/sub/f.txt; want it not written")
			}
		})
	}
}

// TestAttackEndRecordDirectorySize: the end record of a backup's archive says its central
// directory is 4 bytes shorter than it is. Go's reader (and backup with it) finds the
// directory at the offset the end record gives and reads on, so verify said ok and restore
// wrote the tree; unzip, Python's zipfile and 7-Zip take the 4 bytes for bytes before the
// archive and look for the directory 4 bytes later: unzip -t "compensates" and exits 2,
// Python raises BadZipFile, 7-Zip fails (Headers Error). One flipped bit of the size does
// it, in a zip64 end record as in this classic one.
func TestAttackEndRecordDirectorySize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch, data := mutateArchive(t, dir)
	end := bytes.LastIndex(data, []byte("PK\x05\x06"))
	bin.LittleEndian.PutUint32(data[end+12:], bin.LittleEndian.Uint32(data[end+12:])-4)
	if err := os.WriteFile(arch, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "damaged") || !strings.Contains(r.stderr, "size") {
			t.Errorf("%s: exit %d, %q%q; want %d and the archive damaged, its directory's size named", args[0], r.code, r.stdout, r.stderr, exitFailed)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "dest/app")); err == nil {
		t.Errorf("restore wrote dest/app; want nothing written")
	}
}

// toZip64 rewrites the end of the archive data as a zip64 archive's: a zip64 end record and
// its locator before the classic end record, whose counts, size and offset are maxed out so
// that readers take the zip64 record's, as archives of more than 65,535 entries have it.
func toZip64(t *testing.T, data []byte) []byte {
	t.Helper()
	end := bytes.LastIndex(data, []byte("PK\x05\x06"))
	classic := data[end:]
	records := uint64(bin.LittleEndian.Uint16(classic[10:]))
	size, off := uint64(bin.LittleEndian.Uint32(classic[12:])), uint64(bin.LittleEndian.Uint32(classic[16:]))
	out := append([]byte(nil), data[:end]...)
	rec := bin.LittleEndian.AppendUint32(nil, 0x06064b50)
	rec = bin.LittleEndian.AppendUint64(rec, 44)
	rec = bin.LittleEndian.AppendUint16(rec, 3<<8|45)
	rec = bin.LittleEndian.AppendUint16(rec, 45)
	rec = bin.LittleEndian.AppendUint64(rec, 0) // this disk, and the directory's
	rec = bin.LittleEndian.AppendUint64(rec, records)
	rec = bin.LittleEndian.AppendUint64(rec, records)
	rec = bin.LittleEndian.AppendUint64(rec, size)
	rec = bin.LittleEndian.AppendUint64(rec, off)
	loc := bin.LittleEndian.AppendUint32(nil, 0x07064b50)
	loc = bin.LittleEndian.AppendUint32(loc, 0)
	loc = bin.LittleEndian.AppendUint64(loc, uint64(end))
	loc = bin.LittleEndian.AppendUint32(loc, 1)
	maxed := append([]byte(nil), classic...)
	bin.LittleEndian.PutUint16(maxed[8:], 0xffff)
	bin.LittleEndian.PutUint16(maxed[10:], 0xffff)
	bin.LittleEndian.PutUint32(maxed[12:], 0xffffffff)
	bin.LittleEndian.PutUint32(maxed[16:], 0xffffffff)
	out = append(append(append(out, rec...), loc...), maxed...)
	return out
}

// TestAttackEndRecordDirectoryDisk: a zip64 archive of backup's (its end rewritten as one of
// more than 65,535 entries has it) whose classic end record, or zip64 one, says its central
// directory starts on disk 1. Go's reader ignores the field, so verify said ok and restore
// wrote the tree; unzip -t then reads no entry ("attempt to seek before beginning of
// zipfile", exit 3). The zip64 archive as it is verifies.
func TestAttackEndRecordDirectoryDisk(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		field int // offset from the end of the file: the classic record is its last 22 bytes
	}{
		{"zip64 as it is", 0},
		{"classic record", 22 - 6},
		{"zip64 record", 22 + 20 + 56 - 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			data = toZip64(t, data)
			if tt.field != 0 {
				data[len(data)-tt.field] = 1
			}
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
				r := backup(t, runOpts{dir: dir}, args...)
				switch {
				case tt.field == 0 && r.code != 0:
					t.Errorf("%s: exit %d, %q%q; want 0", args[0], r.code, r.stdout, r.stderr)
				case tt.field != 0 && (r.code != exitFailed || !strings.Contains(r.stderr, "disks")):
					t.Errorf("%s: exit %d, %q%q; want %d and the archive damaged, split over disks", args[0], r.code, r.stdout, r.stderr, exitFailed)
				}
			}
		})
	}
}

// TestAttackZip64EndRecordSize: the zip64 end record of a zip64 archive of backup's says it
// is 64 bytes longer than the 44 it is (or 4 shorter), so that it would end past its locator
// (or before it). Go's reader, and Python's zipfile, never read that field, so verify said
// ok and restore wrote the tree; unzip -t takes the extra bytes for extensible data that
// overlaps the locator (possible zip bomb, exit 12), and 7-Zip fails the archive, either way.
func TestAttackZip64EndRecordSize(t *testing.T) {
	t.Parallel()
	for _, delta := range []int{64, -4} {
		t.Run(fmt.Sprint(delta), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			arch, data := mutateArchive(t, dir)
			data = toZip64(t, data)
			p := bytes.LastIndex(data, []byte("PK\x06\x06"))
			bin.LittleEndian.PutUint64(data[p+4:], uint64(44+delta))
			if err := os.WriteFile(arch, data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
				r := backup(t, runOpts{dir: dir}, args...)
				if r.code != exitFailed || !strings.Contains(r.stderr, "damaged") || !strings.Contains(r.stderr, "zip64 end record") {
					t.Errorf("%s: exit %d, %q%q; want %d and the zip64 end record damaged", args[0], r.code, r.stdout, r.stderr, exitFailed)
				}
			}
		})
	}
}

// TestAttackEntryOnOtherDisk: the central record of app/sub/f.txt says the entry starts on
// disk 1 ("disk number start"). Go's reader, unzip and Python ignore the field, so verify
// said ok and restore wrote the file; 7-Zip looks for the entry on that volume and reads
// none of it (Unavailable data, exit 2). An entry of a split archive, as the end record's
// disk fields are.
func TestAttackEntryOnOtherDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch, data := mutateArchive(t, dir)
	c := centralRecordAt(t, data, "app/sub/f.txt")
	bin.LittleEndian.PutUint16(data[c+34:], 1)
	if err := os.WriteFile(arch, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "damaged") || !strings.Contains(r.stderr, "disk") {
			t.Errorf("%s: exit %d, %q%q; want %d and the archive damaged, split over disks", args[0], r.code, r.stdout, r.stderr, exitFailed)
		}
	}
}
