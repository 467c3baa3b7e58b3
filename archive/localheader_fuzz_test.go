package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzCheckLocal reads arbitrary bytes as the local header of an entry whose central record
// the fuzzer makes too: nothing panics, and a local header taken as agreeing starts the data
// after itself, and, without a data descriptor, says what the central record says.
func FuzzCheckLocal(f *testing.F) {
	f.Add(localSeed("a.txt", 8, 0, 0x1234, 5, 7, nil), "a.txt", []byte(nil), uint16(8), uint16(0), uint32(0x1234), uint64(5), uint64(7))
	f.Add(localSeed("b", 0, flagDataDesc, 0, 0, 0, nil), "b", []byte(nil), uint16(0), uint16(flagDataDesc), uint32(0), uint64(0), uint64(0))
	zip64 := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, zip64ExtraID), 16)
	zip64 = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(zip64, 9), 3)
	f.Add(localSeed("z", 8, 0, 1, uint32max, uint32max, zip64), "z", zip64, uint16(8), uint16(0), uint32(1), uint64(3), uint64(9))
	f.Fuzz(func(t *testing.T, local []byte, name string, extra []byte, method, flags uint16, crc uint32, csize, usize uint64) {
		if len(name) > 0xffff || len(extra) > 0xffff {
			return
		}
		file := &zip.File{FileHeader: zip.FileHeader{Name: name, Extra: extra, Method: method, Flags: flags,
			CRC32: crc, CompressedSize64: csize, UncompressedSize64: usize}}
		span, err := checkLocal(file, localRef{ra: bytes.NewReader(local), off: 0})
		if err != nil {
			return
		}
		lh, err := readLocal(localRef{ra: bytes.NewReader(local), off: 0}, len(name), len(extra))
		if err != nil {
			t.Fatalf("checkLocal took a local header readLocal refuses: %v", err)
		}
		switch {
		case span.data < localLen+int64(len(name)):
			t.Fatalf("data start at %d, inside the local header", span.data)
		case span.end < span.data:
			t.Fatalf("entry ends at %d, before its data at %d", span.end, span.data)
		case lh.name != name:
			t.Fatalf("local name %q taken for central %q", lh.name, name)
		case lh.method != method:
			t.Fatalf("local method %d taken for central %d", lh.method, method)
		case lh.flags&flagDataDesc == 0 && (lh.crc != crc || lh.csize != csize || lh.usize != usize):
			t.Fatalf("local crc %x sizes %d/%d taken for central %x %d/%d", lh.crc, lh.csize, lh.usize, crc, csize, usize)
		case span.data != localLen+int64(le16(local[26:]))+int64(le16(local[28:])):
			t.Fatalf("data start at %d, where Go's reader finds %d", span.data, localLen+int64(le16(local[26:]))+int64(le16(local[28:])))
		}
		// Go's reader reads a data descriptor where the central record says one follows,
		// and takes its CRC-32 as it reads it. Where the local header does not say so too,
		// the descriptor is not looked for, by design (see TestDataDescriptorFlag).
		if flags&flagDataDesc != 0 && lh.flags&flagDataDesc != 0 && span.data+int64(csize) >= 0 {
			if got, ok := goDescriptorCRC(local, span.data+int64(csize)); !ok || got != crc {
				t.Fatalf("descriptor taken for CRC-32 %08x; Go's reader reads %08x (%v)", crc, got, ok)
			}
		}
	})
}

// localSeed is a local header as a writer makes it.
func localSeed(name string, method, flags uint16, crc, csize, usize uint32, extra []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, localSig)
	b = binary.LittleEndian.AppendUint16(b, 20)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint16(b, method)
	b = binary.LittleEndian.AppendUint32(b, 0) // time, date
	b = binary.LittleEndian.AppendUint32(b, crc)
	b = binary.LittleEndian.AppendUint32(b, csize)
	b = binary.LittleEndian.AppendUint32(b, usize)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(extra)))
	b = append(b, name...)
	return append(b, extra...)
}

// goDescriptorCRC is the CRC-32 Go's reader reads in the data descriptor at off in b: after
// the signature when the first 4 bytes are it, else the first 4 bytes; 12 bytes in all
// without the signature, 16 with it, or none.
func goDescriptorCRC(b []byte, off int64) (uint32, bool) {
	if off > int64(len(b)) {
		return 0, false
	}
	d := b[off:]
	switch {
	case len(d) >= 16 && le32(d) == descriptorSig:
		return le32(d[4:]), true
	case len(d) >= 12 && le32(d) != descriptorSig:
		return le32(d), true
	}
	return 0, false
}
