package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"backup/format"
)

// wrappedCountZip builds an archive whose manifest is its first entry, followed by extra
// empty files, and whose end record is a classic one counting the records modulo 65,536, as
// writers before zip64 did (Go's reader accepts that: it compares 16 bits only).
func wrappedCountZip(t testing.TB, extra int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	m := &format.Manifest{ToolVersion: "test", Status: "complete", Files: []format.File{}, Skipped: []format.Skipped{},
		Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	addManifest(t, zw, m)
	for i := range extra {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f%06d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	// [directory][zip64 end record 56][locator 20][end record 22]: keep the directory, and
	// end it with a classic end record alone.
	z64 := len(data) - 22 - 20 - 56
	if binary.LittleEndian.Uint32(data[z64:]) != eocd64Sig {
		t.Fatal("no zip64 end record")
	}
	size64, off64 := binary.LittleEndian.Uint64(data[z64+40:]), binary.LittleEndian.Uint64(data[z64+48:])
	records := uint16((extra + 1) % 65536)
	out := bytes.Clone(data[:z64])
	eocd := make([]byte, 22)
	binary.LittleEndian.PutUint32(eocd, eocdSig)
	binary.LittleEndian.PutUint16(eocd[8:], records)
	binary.LittleEndian.PutUint16(eocd[10:], records)
	binary.LittleEndian.PutUint32(eocd[12:], uint32(size64))
	binary.LittleEndian.PutUint32(eocd[16:], uint32(off64))
	return append(out, eocd...)
}

// TestManifestReadAheadCountWrapped: aheadMax is to keep an archive of more entries than
// 131,072 from being read ahead (Go's list and the manifest in memory at once). The end
// record's count is checked by Go's reader to 16 bits only, so an archive of 131,073
// entries whose end record counts 1 (131,073 mod 65,536) opens with all its entries, and
// the walk, trusting the count, reads its manifest ahead.
func TestManifestReadAheadCountWrapped(t *testing.T) {
	extra := aheadMax // 131,073 records in all
	data := wrappedCountZip(t, extra)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != extra {
		t.Fatalf("Go's reader read %d entries, want %d", len(r.Entries), extra)
	}
	if r.Manifest == nil {
		t.Fatalf("no manifest: %v", r.ManifestErr)
	}
	if a := readManifestAhead(bytes.NewReader(data), int64(len(data)), false); a != nil && a.f != nil {
		a.wait()
		t.Errorf("an archive of %d entries (more than aheadMax, %d) had its manifest read ahead: its end record counts %d",
			len(r.Entries)+1, aheadMax, (extra+1)%65536)
	}
}
