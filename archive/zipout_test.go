package archive

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"backup/atomicfile"
)

// zipHeaders are entries of the kinds backup writes: a file with its sizes in the local
// header, one with a data descriptor, a directory, a name that needs the UTF-8 flag.
func zipHeaders() []*zip.FileHeader {
	mod := time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)
	var hs []*zip.FileHeader
	for i, name := range []string{"a.txt", "big.bin", "dir/", "é.txt"} {
		fh := &zip.FileHeader{Name: name, CreatorVersion: creatorUnix<<8 | zipVersion20, ReaderVersion: zipVersion20, Method: zip.Deflate}
		setModified(fh, mod)
		fh.SetMode(0o640)
		fh.CRC32 = uint32(i) * 0x01020304
		fh.CompressedSize64, fh.UncompressedSize64 = 5, 9
		if name == "big.bin" {
			fh.Flags |= flagDataDesc
		}
		if name == "dir/" {
			fh.Method, fh.CompressedSize64, fh.UncompressedSize64 = zip.Store, 0, 0
		}
		if name == "é.txt" {
			fh.Flags |= flagUTF8
		}
		hs = append(hs, fh)
	}
	return hs
}

// writeEntries writes the entries, then a deflated manifest, through the writer the functions
// given make.
func writeEntries(t *testing.T, create func(*zip.FileHeader) (io.Writer, error), createHeader func(*zip.FileHeader) (io.Writer, error), close func() error) {
	t.Helper()
	for _, fh := range zipHeaders() {
		w, err := create(fh)
		if err != nil {
			t.Fatal(err)
		}
		if fh.CompressedSize64 > 0 {
			w.Write([]byte("12345"))
		}
	}
	fh := &zip.FileHeader{Name: ".backup-manifest.json", Method: zip.Deflate, Modified: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)}
	fh.SetMode(0o644)
	w, err := createHeader(fh)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte(`{"files":[]}`), 1000))
	if err := close(); err != nil {
		t.Fatal(err)
	}
}

// The zipWriter writes the bytes archive/zip's Writer writes for the same entries, given the
// manifest's compressor, whether its central directory stays in memory or spills to a file.
func TestZipWriterSameBytes(t *testing.T) {
	var want bytes.Buffer
	zw := zip.NewWriter(&want)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return newChunkWriter(out, filesPool(t, 1)) })
	writeEntries(t, zw.CreateRaw, zw.CreateHeader, zw.Close)
	for _, spill := range []bool{false, true} {
		var got bytes.Buffer
		z := newZipWriter(&got, t.TempDir(), filesPool(t, 2))
		create := z.CreateRaw
		if spill {
			create = func(fh *zip.FileHeader) (io.Writer, error) {
				w, err := z.CreateRaw(fh)
				if err == nil {
					err = z.dir.spill()
				}
				return w, err
			}
		}
		writeEntries(t, create, z.CreateHeader, z.Close)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("spill %v: the zipWriter wrote %d bytes that differ from archive/zip's %d", spill, got.Len(), want.Len())
		}
	}
}

// The zip64 end records and central fields are archive/zip's for an entry past 4 GiB.
func TestZipWriterZip64Central(t *testing.T) {
	fh := zipHeaders()[1]
	fh.CompressedSize64, fh.UncompressedSize64 = 5<<30, 6<<30
	b := appendCentral(nil, fh, 7<<30)
	r, err := zip.NewReader(bytes.NewReader(append(b, endRecords(1, uint64(len(b)), 0, uint64(len(b)))...)), int64(len(b)+eocd64Len+eocd64LocLen+eocdLen))
	if err != nil {
		t.Fatal(err)
	}
	if f := r.File[0]; f.CompressedSize64 != 5<<30 || f.UncompressedSize64 != 6<<30 {
		t.Errorf("sizes %d, %d; want 5 GiB, 6 GiB", f.CompressedSize64, f.UncompressedSize64)
	}
}

// The zipWriter's memory does not grow with the entries: their central records past
// dirMemory are in the temp file. (Go's writer held about 190 bytes an entry.)
func TestZipWriterMemoryFlat(t *testing.T) {
	const entries = 100_000
	z := newZipWriter(io.Discard, t.TempDir(), filesPool(t, 2))
	defer z.dir.close()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	mod := time.Unix(1_700_000_000, 0)
	for i := range entries {
		fh := &zip.FileHeader{Name: "some/folder/file-" + string(rune('a'+i%26)) + ".txt", Method: zip.Deflate}
		setModified(fh, mod)
		fh.CompressedSize64, fh.UncompressedSize64 = 50, 100
		w, err := z.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(make([]byte, 50))
	}
	if grew := int64(heap()) - int64(before); grew > 2*dirMemory {
		t.Errorf("the heap grew by %d bytes over %d entries (%d an entry); want at most %d in all", grew, entries, grew/entries, 2*dirMemory)
	}
	if z.dir.count != entries || z.dir.file == nil {
		t.Errorf("%d records, spilled %v; want %d, spilled", z.dir.count, z.dir.file != nil, entries)
	}
}

// The central directory comes out as the records went in, byte for byte, across the blocks
// dirRecords fills (a record that does not fit the room left begins the next) and the
// spills to its temp file.
func TestDirRecordsInOrder(t *testing.T) {
	d := &dirRecords{spoolDir: t.TempDir()}
	defer d.close()
	var want []byte
	mod := time.Unix(1_700_000_000, 0)
	spilled := false
	for i := 0; len(want) < dirMemory+3*dirBlock; i++ {
		name := fmt.Sprintf("folder/%d", i)
		if i%500 == 0 { // long names leave blocks with room a short record would fill
			name += strings.Repeat("x", 40_000+i%7_000)
		}
		fh := &zip.FileHeader{Name: name, Method: zip.Deflate}
		setModified(fh, mod)
		want = appendCentral(want, fh, uint64(i)*100)
		if err := d.add(fh, uint64(i)*100); err != nil {
			t.Fatal(err)
		}
		if d.file != nil && !spilled {
			spilled = true
			if name := spoolName(t, d.file); strings.Contains(name, atomicfile.SpoolPrefix) {
				t.Errorf("the spill had a name in its folder (%s): a run killed before its removal left it", name)
			}
		}
	}
	var got bytes.Buffer
	if err := d.writeTo(&got); err != nil {
		t.Fatal(err)
	}
	if !spilled {
		t.Fatal("the records never spilled to the temp file")
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("central directory of %d bytes differs from the %d bytes of its records", got.Len(), len(want))
	}
}
