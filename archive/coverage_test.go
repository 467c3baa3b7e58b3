package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
)

// splice replaces del bytes of the zip data at at by ins, moving the offsets of the local
// headers from at on and of the central directory to match.
func splice(t *testing.T, data []byte, at, del int, ins []byte) []byte {
	t.Helper()
	out := slices.Concat(data[:at], ins, data[at+del:])
	delta := len(ins) - del
	eocd := bytes.LastIndex(out, []byte("PK\x05\x06"))
	size := int(binary.LittleEndian.Uint32(out[eocd+12:]))
	dir := int(binary.LittleEndian.Uint32(out[eocd+16:]))
	if dir >= at {
		dir += delta
		binary.LittleEndian.PutUint32(out[eocd+16:], uint32(dir))
	}
	for p := dir; p < dir+size; {
		if off := int(binary.LittleEndian.Uint32(out[p+42:])); off >= at {
			binary.LittleEndian.PutUint32(out[p+42:], uint32(off+delta))
		}
		n, x, c := binary.LittleEndian.Uint16(out[p+28:]), binary.LittleEndian.Uint16(out[p+30:]), binary.LittleEndian.Uint16(out[p+32:])
		p += centralLen + int(n) + int(x) + int(c)
	}
	return out
}

// streamedZip is a.txt and b.txt as a streaming writer stores them: deflated, with a data
// descriptor after the data (with its signature).
func streamedZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"a.txt", "b.txt"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(strings.Repeat(name, 50)))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unlisted is the zip data with an empty central directory: its local entries listed
// nowhere.
func unlisted(data []byte) []byte {
	eocd := bytes.LastIndex(data, []byte("PK\x05\x06"))
	dir := int(binary.LittleEndian.Uint32(data[eocd+16:]))
	out := slices.Concat(data[:dir], data[eocd:])
	clear(out[dir+8 : dir+16]) // entries on this disk and in all, directory size
	return out
}

// overlapZip is two stored entries, the data of a.txt being b.txt's whole local entry.
func overlapZip() []byte {
	local := func(name string, data []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, localSig)
		b = binary.LittleEndian.AppendUint16(b, 20)
		b = append(b, make([]byte, 8)...) // flags, method, time, date
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(data))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
		b = binary.LittleEndian.AppendUint16(b, 0)
		return append(append(b, name...), data...)
	}
	central := func(name string, data []byte, off int) []byte {
		b := binary.LittleEndian.AppendUint32(nil, centralSig)
		b = binary.LittleEndian.AppendUint16(b, 0x031e)
		b = binary.LittleEndian.AppendUint16(b, 20)
		b = append(b, make([]byte, 8)...)
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(data))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
		b = append(b, make([]byte, 8)...) // extra, comment, disk, internal attributes
		b = binary.LittleEndian.AppendUint32(b, 0o100644<<16)
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
		return append(b, name...)
	}
	lb := local("b.txt", []byte("inner data\n"))
	la := local("a.txt", lb)
	cd := slices.Concat(central("a.txt", lb, 0), central("b.txt", []byte("inner data\n"), localLen+len("a.txt")))
	end := binary.LittleEndian.AppendUint32(nil, eocdSig)
	end = append(end, 0, 0, 0, 0, 2, 0, 2, 0)
	end = binary.LittleEndian.AppendUint32(end, uint32(len(cd)))
	end = binary.LittleEndian.AppendUint32(end, uint32(len(la)))
	end = append(end, 0, 0)
	return slices.Concat(la, cd, end)
}

// TestVerifyCoverage: the entries must lie end to end from the first local header to the
// central directory, whatever the form of their data descriptors; bytes that no entry
// covers and entries that overlap are damage, and a stub before a foreign archive is not,
// unless it holds a local header.
func TestVerifyCoverage(t *testing.T) {
	plain := plainZip(t)
	streamed := streamedZip(t)
	// Without their signatures, the descriptors are 4 bytes shorter.
	unsigned := streamed
	for range 2 {
		unsigned = splice(t, unsigned, bytes.Index(unsigned, []byte("PK\x07\x08")), 4, nil)
	}
	hidden := plainZip(t)
	for _, c := range []struct {
		name string
		data []byte
		want string // "" for no problem
	}{
		{"plain", plain, ""},
		{"descriptors", streamed, ""},
		{"descriptors without signature", unsigned, ""},
		{"stub", splice(t, plain, 0, 0, []byte(strings.Repeat("#!stub\n", 10))), ""},
		{"stub with a local header", splice(t, plain, 0, 0, []byte("#!stub\nPK\x03\x04")), "the 11 bytes before the first entry hold a local header signature"},
		{"gap", splice(t, plain, localAt(t, plain, "b.txt"), 0, make([]byte, 7)), "b.txt: damaged: 7 bytes before its local header that no entry covers"},
		{"gap after a descriptor", splice(t, streamed, localAt(t, streamed, "b.txt"), 0, []byte("PK\x03\x04")), "b.txt: damaged: 4 bytes before its local header"},
		{"gap before the directory", splice(t, hidden, bytes.Index(hidden, []byte("PK\x01\x02")), 0, []byte("junk")), "b.txt: damaged: 4 bytes after it, before the central directory, that no entry covers"},
		{"overlap", overlapZip(), "b.txt: damaged: its local header is inside the entry a.txt"},
		{"no entry listed", unlisted(plain), "before the first entry hold a local header signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Verify(t.Context(), writeZip(t, c.data), VerifyOptions{Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(problemStrings(res.Problems), "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("problems %q, want %q", got, c.want)
			}
		})
	}
}
