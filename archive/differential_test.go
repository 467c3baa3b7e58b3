package archive

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backup/format"
)

// differentialSeeds are archives as our Writer and Go's zip writer make them (the latter
// with data descriptors), for the fuzz targets that read one archive two ways.
func differentialSeeds(tb testing.TB) map[string][]byte {
	path, _, _ := writtenArchive(tb)
	written, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	seeds := walkCentralSeeds(tb)
	seeds["written"] = written
	seeds["central-descriptor"] = centralDescriptorOnly(tb, written, "a.txt")
	seeds["unsigned-descriptor-crc-sig"] = unsignedDescriptorSigCRC(tb)
	seeds["go-backup"] = buildZip(tb, []zent{{name: "a", body: "alpha"}, {name: "d/"}, {name: "d/b", body: strings.Repeat("b", 3000)},
		{name: "l", body: "a", symlink: true}}, true)
	return seeds
}

// centralDescriptorOnly sets the data-descriptor flag in the central record of the named
// entry of data, an archive without descriptors, and not in its local header: Go's reader
// goes by the central flag and reads a descriptor after the data, where there is none.
func centralDescriptorOnly(tb testing.TB, data []byte, name string) []byte {
	tb.Helper()
	out := bytes.Clone(data)
	for _, off := range centralOffsets(tb, out) {
		at := off - 42 // the record's start
		if n := int(le16(out[at+28:])); string(out[at+46:at+46+n]) == name {
			out[at+8] |= flagDataDesc
			return out
		}
	}
	tb.Fatalf("no entry %q", name)
	return nil
}

// unsignedDescriptorSigCRC is an archive of one stored entry whose CRC-32 is the data
// descriptor's signature, followed by a descriptor without one: its CRC-32 reads as the
// signature, so that Go's reader takes the compressed size for the CRC-32.
func unsignedDescriptorSigCRC(tb testing.TB) []byte {
	tb.Helper()
	body := []byte("descriptor \xb3\x36\x1b\xd2") // its last 4 bytes make the CRC-32 the signature's
	if crc32.ChecksumIEEE(body) != descriptorSig {
		tb.Fatalf("CRC-32 %08x", crc32.ChecksumIEEE(body))
	}
	data := rawZip(tb, &zip.FileHeader{Name: "x", Method: zip.Store, Flags: flagDataDesc}, body, descriptorSig)
	sig := []byte("PK\x07\x08")
	at := bytes.Index(data, append(bytes.Clone(sig), sig...)) // the signature, then the CRC-32
	if at < 0 {
		tb.Fatal("no data descriptor")
	}
	data = append(data[:at], data[at+4:]...)
	end := bytes.LastIndex(data, []byte("PK\x05\x06"))
	binary.LittleEndian.PutUint32(data[end+16:], le32(data[end+16:])-4) // the directory moved
	return data
}

// FuzzVerifyMatchesGo: an archive Verify finds sound reads the same through Go's zip reader
// as through ours: the same entries in the same order (those list shows, and the manifest),
// each of which Go's reader opens and reads to its end without error, with the bytes
// CopyChecked (restore's read) gives. A tool that is not backup must not find damage, or
// other data, in an archive backup calls sound.
func FuzzVerifyMatchesGo(f *testing.F) {
	for _, data := range differentialSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(r.Entries) > 100 {
			return
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			t.Fatalf("our reader opened it; Go's reader: %v", err)
		}
		for _, zf := range zr.File {
			if zf.UncompressedSize64 > 1<<16 {
				return // reading a zip bomb to its end only slows the fuzzer down
			}
		}
		res, err := r.Verify(t.Context(), VerifyOptions{Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() {
			return
		}
		// Go's reader has no Zstandard, which backup writes under --method zstd.
		zr.RegisterDecompressor(MethodZstd, zstdReader)
		offsets, err := headerOffsets(bytes.NewReader(data), int64(len(data)), zr.File)
		if err != nil {
			t.Fatalf("verified; headerOffsets: %v", err)
		}
		var files []*zip.File
		for i, zf := range zr.File {
			if strings.TrimSuffix(zf.Name, "/") != format.ManifestName {
				files = append(files, zf)
			}
			_, err := readGo(zf)
			// Go's reader goes by the central record's data-descriptor flag, and fails an
			// entry whose local header holds its CRC-32 and sizes under a central flag that
			// says they follow the data; our reader goes by the local header's, as Info-ZIP
			// does, by design (restore's TestDataDescriptorFlag).
			if err != nil && zf.Flags&flagDataDesc != 0 && le16(data[offsets[i]+6:])&flagDataDesc == 0 {
				continue
			}
			if err != nil {
				t.Fatalf("verified; Go's reader reads %q: %v", zf.Name, err)
			}
		}
		if len(files) != len(r.Entries) {
			t.Fatalf("verified with %d entries; Go's reader has %d", len(r.Entries), len(files))
		}
		buf := make([]byte, 4096)
		for i, e := range r.Entries {
			if files[i].Name != e.rawName() {
				t.Fatalf("entry %d: %q, Go's reader %q", i, e.rawName(), files[i].Name)
			}
			if e.IsDir {
				continue
			}
			var ours bytes.Buffer
			if _, err := r.CopyChecked(&ours, e, buf); err != nil {
				t.Fatalf("verified; CopyChecked of %q: %v", e.Name, err)
			}
			if goes, _ := readGo(files[i]); !bytes.Equal(ours.Bytes(), goes) {
				t.Fatalf("%q: our reader gives %q, Go's reader %q", e.Name, ours.Bytes(), goes)
			}
		}
	})
}

func readGo(zf *zip.File) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// FuzzReadBackMatchesVerify: ReadBack (a run's check of the archive it wrote, against the
// manifest it holds) and Verify (a later check, against the manifest in the archive) agree
// on whether the archive our Writer made, then damaged, is sound.
func FuzzReadBackMatchesVerify(f *testing.F) {
	path, m, sum := writtenArchive(f)
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(flipByteIn(f, good, "a.txt"))
	file := filepath.Join(f.TempDir(), "damaged.zip") // one worker runs one input at a time
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// Both hold the file to its own size and SHA-256: the whole file's digest, which
		// sets any damaged file apart from its receipt and so decides both verdicts in
		// use, decides nothing here, and the entries do.
		digest := sha256.Sum256(data)
		own := format.Summary{Size: int64(len(data)), SHA256: hex.EncodeToString(digest[:])}
		rsum := sum
		rsum.Summary, rsum.written = own, writtenKey{}
		rb, err := ReadBack(t.Context(), file, m, rsum, VerifyOptions{Jobs: 1})
		rbOK := err == nil && rb.OK()
		var rbSaid []string
		if err != nil {
			rbSaid = []string{err.Error()}
		} else {
			rbSaid = problemStrings(rb.Problems)
		}
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if rbOK {
				t.Fatalf("ReadBack found it sound; NewReader: %v", err)
			}
			return
		}
		v, err := r.Verify(t.Context(), VerifyOptions{Jobs: 1, Expect: &own})
		if err != nil {
			t.Fatal(err)
		}
		if v.OK() != rbOK {
			t.Fatalf("ReadBack: %q\nVerify: %q", rbSaid, problemStrings(v.Problems))
		}
	})
}
