package main

import (
	bin "encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAttackVerifyCentralDirectoryOtherSize: a backup archive (its receipt removed, as when
// it is handed on alone) whose central directory's records do not take up the size its end
// record gives: the last central record's comment length set to 1, so that its comment is
// the end record's first byte, or 4 bytes (a PKWARE digital signature record) put between
// the last record and the end record, counted in the directory's size. Go's reader reads
// the records by their count and never compares their length with that size, so verify,
// list and restore read all of it (exit 0); unzip -t ("didn't find end-of-central-dir
// signature at end of central dir", exit 1), bsdtar ("Invalid central directory
// signature") and 7-Zip ("Headers Error") fail either, Python's zipfile the second
// ("Truncated central directory"). Correct: the records must end exactly where the directory's size ends it, at the
// end record (exit 1, as for every other disagreement of the end record with the directory).
func TestAttackVerifyCentralDirectoryOtherSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(b []byte, eocd int) []byte
	}{
		{"comment runs into the end record", func(b []byte, eocd int) []byte {
			last := lastCentralRecord(t, b, eocd)
			bin.LittleEndian.PutUint16(b[last+32:], 1)
			return b
		}},
		{"bytes between the records and the end record", func(b []byte, eocd int) []byte {
			end := append([]byte{}, b[eocd:]...)
			bin.LittleEndian.PutUint32(end[12:], bin.LittleEndian.Uint32(end[12:])+6)
			return append(append(b[:eocd:eocd], "PK\x05\x05\x00\x00"...), end...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a.txt": {content: "hello\n"}})
			arch := filepath.Join(dir, "a.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
			os.Remove(arch + ".receipt.json")
			b, err := os.ReadFile(arch)
			if err != nil {
				t.Fatal(err)
			}
			eocd := len(b) - 22
			if bin.LittleEndian.Uint32(b[eocd:]) != 0x06054b50 {
				t.Fatal("end record not at the end")
			}
			if err := os.WriteFile(arch, tc.edit(b, eocd), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("unzip", "-t", arch).CombinedOutput(); err == nil {
				t.Fatalf("unzip -t passes the edited archive, so the attack is moot: %s", out)
			}
			for _, cmd := range [][]string{{"verify", arch}, {"list", arch}, {"restore", arch, filepath.Join(dir, "dest")}} {
				if r := backup(t, runOpts{dir: dir}, cmd...); r.code != exitFailed {
					t.Errorf("%s of an archive whose central directory is not the size its end record gives: exit %d, %s; want 1", cmd[0], r.code, r.stdout+r.stderr)
				}
			}
		})
	}
}

// lastCentralRecord is where the last central directory record of the archive b, whose end
// record is at eocd, starts.
func lastCentralRecord(t *testing.T, b []byte, eocd int) int {
	t.Helper()
	off, n := int(bin.LittleEndian.Uint32(b[eocd+16:])), int(bin.LittleEndian.Uint16(b[eocd+10:]))
	for range n - 1 {
		le16 := func(at int) int { return int(bin.LittleEndian.Uint16(b[off+at:])) }
		off += 46 + le16(28) + le16(30) + le16(32)
	}
	if bin.LittleEndian.Uint32(b[off:]) != 0x02014b50 {
		t.Fatal("no central record where the last should be")
	}
	return off
}
