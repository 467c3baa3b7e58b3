package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
)

// zip64Ended is a one-entry archive (name, stored data) that ends with a zip64 end record
// and its locator before the classic end record, which is not maxed out (as some writers
// end every archive; Python's zipfile and libarchive read the zip64 one all the same).
func zip64Ended(t *testing.T, name, data string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(data))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	eocd := bytes.Clone(out[len(out)-eocdLen:])
	size, off := binary.LittleEndian.Uint32(eocd[12:]), binary.LittleEndian.Uint32(eocd[16:])
	out = out[:len(out)-eocdLen]
	le := binary.LittleEndian
	z64 := uint64(len(out))
	out = le.AppendUint32(out, eocd64Sig)
	out = le.AppendUint64(out, eocd64Len-12)
	out = le.AppendUint16(out, 45)
	out = le.AppendUint16(out, 45)
	out = le.AppendUint64(out, 0)
	out = le.AppendUint64(out, 1)
	out = le.AppendUint64(out, 1)
	out = le.AppendUint64(out, uint64(size))
	out = le.AppendUint64(out, uint64(off))
	out = le.AppendUint32(out, eocd64LocSig)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, z64)
	out = le.AppendUint32(out, 1)
	return append(out, eocd...)
}

// TestAttackAppendedZip64ArchiveReadTwoWays: TestAttackAppendedArchiveReadTwoWays with zip64
// end records in both archives. The appended one's locator names its zip64 end record by
// its offset in that archive, where the first archive has its own zip64 end record (the
// same layout), so backup read the first archive's directory, from a base of 0, and the
// check for two directories never ran; Python's zipfile reads the zip64 end record just
// before the locator, the appended one's, and so app/evil. verify said ok.
func TestAttackAppendedZip64ArchiveReadTwoWays(t *testing.T) {
	mustReadAsDamaged(t, append(zip64Ended(t, "app/good", "good"), zip64Ended(t, "app/evil", "EVIL")...), "Python's zipfile")
}

// TestZip64EndedArchiveReads: the zip64 end records alone, where the locator says, are no
// damage.
func TestZip64EndedArchiveReads(t *testing.T) {
	data := zip64Ended(t, "app/good", "good")
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Name != "app/good" {
		t.Errorf("entries %v, want app/good", r.Entries)
	}
}
