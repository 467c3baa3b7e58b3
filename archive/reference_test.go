package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
	"backup/walker"
)

// refArchive archives the regular files below dir as backup create does, with what reuse
// compares in the manifest, and returns the archive's path.
func refArchive(t *testing.T, dir string) string {
	t.Helper()
	path, _ := archiveTree(t, dir, Options{})
	return path
}

// archiveTree is refArchive with opts (its method and level, and OnFile, are set here); it
// also returns what OnFile heard of each file.
func archiveTree(t *testing.T, dir string, opts Options) (string, []format.File) {
	t.Helper()
	var files []format.File
	out := t.TempDir()
	opts.Method, opts.Level, opts.OnFile = format.Deflate, DefaultLevel, func(f format.File) { files = append(files, f) }
	w, err := Create(t.Context(), out, "ref.zip", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := addTreeMeta(t.Context(), w, dir); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil { // OnFile has heard of every file
		t.Fatal(err)
	}
	if _, err := w.CloseManifest(&format.Manifest{Status: "complete", Files: files}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, "ref.zip")
	if err := w.Commit(path, false); err != nil {
		t.Fatal(err)
	}
	return path, files
}

// addTreeMeta adds the regular files below dir to w with their metadata, which reuse
// compares with a reference's.
func addTreeMeta(ctx context.Context, w *Writer, dir string) error {
	walk := walker.Walker{Visit: func(e walker.Entry) error {
		if !e.Info.Mode().IsRegular() {
			return nil
		}
		meta := FileMetaOf(e.Info)
		return w.AddFile(e.Hold(), e.Rel, e.Info, &meta)
	}}
	return walk.Walk(ctx, dir, ".")
}

// openRef opens the archive at path as a reference for a run at level, as one whose receipt
// describes the file as it is.
func openRef(t *testing.T, path string, level int) (*Reference, error) {
	t.Helper()
	return OpenReference(t.Context(), path, fileSum(t, path), format.Deflate, level, ReuseOptions{})
}

// fileSum is the size and SHA-256 of the file at path, as a receipt records them.
func fileSum(t *testing.T, path string) format.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return format.Summary{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

func refTree(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": strings.Repeat("text ", 1000), "empty": "",
		"sub/b.txt": "b", "sub/deeper/c.bin": "\x00\x01\x02"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func unchanged(t *testing.T, ref *Reference, dir, name string) bool {
	t.Helper()
	_, ok := lookupFile(t, ref, dir, name)
	return ok
}

// lookupFile looks up the file name of the tree dir in ref, as a run that lstat'ed it would.
func lookupFile(t *testing.T, ref *Reference, dir, name string) (refEntry, bool) {
	t.Helper()
	info, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return ref.lookup(name, info)
}

func TestReferenceUnchanged(t *testing.T) {
	dir := refTree(t)
	ref, err := openRef(t, refArchive(t, dir), DefaultLevel)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if got := ref.Reusable(); got != 4 {
		t.Errorf("Reusable() = %d, want 4", got)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "sub/b.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a.txt": true, "empty": true, "sub/deeper/c.bin": true,
		"sub/b.txt": false, "sub": false} {
		if got := unchanged(t, ref, dir, name); got != want {
			t.Errorf("Unchanged(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestReferenceOtherSettings(t *testing.T) {
	ref, err := openRef(t, refArchive(t, refTree(t)), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if got := ref.Reusable(); got != 0 {
		t.Errorf("a reference made at level %d gives %d files to a run at level 1, want 0", DefaultLevel, got)
	}
}

func TestReferenceUnreadable(t *testing.T) {
	for name, data := range map[string][]byte{
		"not a zip":   []byte("hello"),
		"no manifest": buildZip(t, []zent{{name: "a", body: "a"}}, false),
		"two manifests": buildZip(t, []zent{{name: format.ManifestName, body: "{}"}, {name: "a", body: "a"},
			{name: format.ManifestName + "/"}}, false),
	} {
		t.Run(name, func(t *testing.T) {
			ref, err := openRef(t, writeZip(t, data), DefaultLevel)
			if err == nil {
				ref.Close()
				t.Fatal("opened")
			}
		})
	}
}

// TestReferenceRepeatedName: a name stored twice is reused from neither entry.
func TestReferenceRepeatedName(t *testing.T) {
	data := buildZip(t, []zent{{name: "a", body: "1"}, {name: "b", body: "b"}, {name: "a", body: "2"}, {name: "c", body: "c"}}, true)
	f, size, err := openFile(writeZip(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := &Reference{f: f, size: size}
	if _, err := ref.readCentral(f, size); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range ref.files {
		names = append(names, ref.name(int32(i)))
	}
	if got, want := strings.Join(names, " "), "b c"; got != want {
		t.Errorf("records of %q, want %q", got, want)
	}
}

// TestReferenceChecksLocalHeader: an entry whose local header disagrees with its central
// record is not copied, even when its bytes are those the manifest records.
func TestReferenceChecksLocalHeader(t *testing.T) {
	dir := refTree(t)
	path := refArchive(t, dir)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The local header's CRC-32 of the first entry, a.txt (walk order).
	if !bytes.HasPrefix(data[localLen:], []byte("a.txt")) {
		t.Fatalf("first entry is not a.txt: %q", data[localLen:localLen+8])
	}
	data[14] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := openRef(t, path, DefaultLevel)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	e, ok := lookupFile(t, ref, dir, "a.txt")
	if !ok {
		t.Fatal("a.txt not unchanged")
	}
	if e.damage == nil || !strings.Contains(e.damage.Error(), "local header") {
		t.Errorf("damage = %v, want the local header's", e.damage)
	}
}

// TestWalkCentral: the central directory streamed gives the headers and local header
// offsets Go's reader gives, with bytes before the archive too (a self-extractor).
func TestWalkCentral(t *testing.T) {
	for name, data := range walkCentralSeeds(t) {
		t.Run(name, func(t *testing.T) {
			n, err := walkMatchesGo(t, data, true)
			if err != nil || n != 6 {
				t.Fatalf("walkCentral: %v after %d records, want 6 (the manifest's too)", err, n)
			}
		})
	}
}

// walkCentralSeeds are archives of the records walkCentral must read as Go's reader does:
// a directory, deflated and stored files, one made on DOS, one older than 1980, with and
// without bytes before the archive.
func walkCentralSeeds(t testing.TB) map[string][]byte {
	entries := []zent{{name: "dir/"}, {name: "dir/a", body: "aaaa"}, {name: "b", body: "b", store: true},
		{name: "dos.txt", body: "x", dos: true}, {name: "old", body: "o", mtime: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}}
	plain := buildZip(t, entries, true)
	return map[string][]byte{"plain": plain, "prefixed": append([]byte("#!/bin/sh\nexit\n"), plain...)}
}

// walkMatchesGo walks the central directory of data and fails the test unless every record
// it gives is the one Go's reader (verify's and restore's) reads at its place, with the
// local header offset headerOffsets finds for it, and the two readers agree on how many
// there are; with timed, each record but the manifest's has the time Go's reader gives. It
// returns how many records the walk gave, and its error: a directory the walk refuses is
// checked no further (refusing more than Go's reader does costs a reference, never a
// backup).
func walkMatchesGo(t *testing.T, data []byte, timed bool) (int, error) {
	t.Helper()
	ra, size := bytes.NewReader(data), int64(len(data))
	var recs []centralRecord
	err := walkCentral(ra, size, func(rec *centralRecord) error {
		r := *rec
		r.Extra = bytes.Clone(rec.Extra)
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return len(recs), err
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		t.Fatalf("walkCentral gave %d records; Go's reader: %v", len(recs), err)
	}
	if len(zr.File) != len(recs) {
		t.Fatalf("walkCentral gave %d records; Go's reader %d", len(recs), len(zr.File))
	}
	offsets, err := headerOffsets(ra, size, zr.File)
	if err != nil {
		t.Fatalf("walkCentral gave %d records; headerOffsets: %v", len(recs), err)
	}
	for i, rec := range recs {
		want := zr.File[i].FileHeader
		want.Modified = time.Time{} // not filled in: see modTime
		got := rec.FileHeader
		if got.Name != want.Name || got.CreatorVersion != want.CreatorVersion || got.Flags != want.Flags ||
			got.Method != want.Method || got.ModifiedTime != want.ModifiedTime || got.ModifiedDate != want.ModifiedDate ||
			got.CRC32 != want.CRC32 || got.CompressedSize64 != want.CompressedSize64 ||
			got.UncompressedSize64 != want.UncompressedSize64 || !bytes.Equal(got.Extra, want.Extra) ||
			got.ExternalAttrs != want.ExternalAttrs || got.Mode() != want.Mode() {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
		}
		if rec.local != offsets[i] {
			t.Errorf("record %d: local header at %d, want %d", i, rec.local, offsets[i])
		}
		// Without an extended timestamp the walk gives no time (such an entry is not
		// reused: see newRefFile), where Go's reader takes the DOS date.
		gotTime, wantTime := modTime(&rec.FileHeader), modTime(&zr.File[i].FileHeader)
		if rec.Name != format.ManifestName && (timed || !gotTime.IsZero()) && !gotTime.Equal(wantTime) {
			t.Errorf("record %d: modTime %v, want %v", i, gotTime, wantTime)
		}
	}
	return len(recs), nil
}

// FuzzWalkCentralMatchesGo: whatever central directory walkCentral accepts (a reference's,
// streamed, parsed before the pass that proves the file), Go's reader accepts too, with the
// same records at the same local headers: a reference never gives an entry other than the
// one verify and restore read there.
func FuzzWalkCentralMatchesGo(f *testing.F) {
	for _, data := range walkCentralSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		walkMatchesGo(t, data, false)
	})
}

// TestReferenceNotAsRecorded: a reference is opened only when it is the file its receipt
// describes, to the byte.
func TestReferenceNotAsRecorded(t *testing.T) {
	path := refArchive(t, refTree(t))
	sum := fileSum(t, path)
	other := sum
	other.SHA256 = strings.Repeat("0", 64)
	longer := sum
	longer.Size++
	for name, want := range map[string]format.Summary{"other SHA-256": other, "other size": longer} {
		t.Run(name, func(t *testing.T) {
			ref, err := OpenReference(t.Context(), path, want, format.Deflate, DefaultLevel, ReuseOptions{})
			if err == nil {
				ref.Close()
			}
			if !errors.Is(err, ErrNotAsRecorded) {
				t.Errorf("OpenReference = %v, want ErrNotAsRecorded", err)
			}
		})
	}
}

// TestReferenceChangedWhileOpened: the central directory and manifest are parsed before the
// file is hashed; a file that held other bytes for the parse than for the hash (which then
// matches the receipt) is not trusted.
func TestReferenceChangedWhileOpened(t *testing.T) {
	path := refArchive(t, refTree(t))
	sum := fileSum(t, path)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Clone(orig)
	dir := bytes.Index(edited, []byte("PK\x01\x02"))
	edited[dir+16] ^= 0xff // the first central record's CRC-32, which the parse takes as it is
	for _, tt := range []struct {
		name   string
		parsed []byte
		want   error
	}{{"unchanged", orig, nil}, {"changed", edited, ErrNotAsRecorded}} {
		t.Run(tt.name, func(t *testing.T) {
			ref := &Reference{size: int64(len(orig))}
			rec := &recordingReader{ra: bytes.NewReader(tt.parsed)}
			if err := ref.read(rec, ref.size, format.Compression{Method: format.Deflate, Level: DefaultLevel}); err != nil {
				t.Fatal(err)
			}
			if ref.Reusable() == 0 {
				t.Fatal("nothing to reuse: the test needs records")
			}
			if err := ref.prove(t.Context(), bytes.NewReader(orig), sum, rec, rec.reads, nil); err != tt.want {
				t.Errorf("prove = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestRangeCheck: ranges, overlapping or not, are checked whatever the size of the chunks
// the file streams past in, and a byte changed in any of them is found.
func TestRangeCheck(t *testing.T) {
	data := make([]byte, 10_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	spans := [][2]int64{{0, 1}, {5, 300}, {100, 5000}, {4999, 5001}, {9000, 10_000}, {9999, 10_000}, {2, 9998}}
	var reads []readRecord
	for _, s := range spans {
		reads = append(reads, readRecord{off: s[0], end: s[1], sum: sha256.Sum256(data[s[0]:s[1]])})
	}
	stream := func(data []byte, chunk int) bool {
		rc := rangeCheck{reads: slices.Clone(reads)}
		slices.SortFunc(rc.reads, func(a, b readRecord) int { return int(a.off - b.off) })
		for at := 0; at < len(data); at += chunk {
			if !rc.feed(data[at:min(at+chunk, len(data))], int64(at)) {
				return false
			}
		}
		return rc.done()
	}
	for _, chunk := range []int{1, 7, 4096, 10_000, 1 << 20} {
		if !stream(data, chunk) {
			t.Errorf("chunks of %d: the unchanged data fails", chunk)
		}
		for _, at := range []int{0, 4999, 5000, 9999} {
			changed := bytes.Clone(data)
			changed[at] ^= 1
			if stream(changed, chunk) {
				t.Errorf("chunks of %d: a byte changed at %d is not found", chunk, at)
			}
		}
	}
	if stream(data[:9999], 4096) {
		t.Error("a file cut short passes")
	}
}

// TestReuseEntryChangedAfterOpen: an entry of the reference changed after the reference was
// proven (while the run goes on) is not copied: the file is read instead, with a warning
// OpReuse, and the others are copied.
func TestReuseEntryChangedAfterOpen(t *testing.T) {
	dir := refTree(t)
	path := refArchive(t, dir)
	ref, err := openRef(t, path, DefaultLevel)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	flipDataByte(t, path, "a.txt", 2)
	var warnings []string
	_, files := archiveTree(t, dir, Options{Reference: ref, OnWarn: func(err error) { warnings = append(warnings, err.Error()) }})
	var reused []string
	for _, f := range files {
		if f.Reused {
			reused = append(reused, f.Path)
		}
	}
	if got, want := strings.Join(reused, " "), "empty sub/b.txt sub/deeper/c.bin"; got != want {
		t.Errorf("reused %q, want %q", got, want)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], format.OpReuse+" a.txt: reference entry damaged") {
		t.Errorf("warnings %q, want one reuse warning for a.txt", warnings)
	}
}

// TestReferencePlainReadOnce: a reference that is no age file is read once, though the run
// could decrypt one (ReuseOptions.Unseal gives such a file back as is, as seal's does). It
// was read and hashed twice, as an encrypted one is: 0.1 s of a 0.4 s reusing run.
func TestReferencePlainReadOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "random"), randomData(8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	path := refArchive(t, dir)
	want := fileSum(t, path)
	passThrough := func(file io.ReaderAt, size int64) (io.ReaderAt, int64, error) { return file, size, nil }
	before := bytesReadSoFar(t)
	ref, err := OpenReference(t.Context(), path, want, format.Deflate, DefaultLevel, ReuseOptions{Unseal: passThrough})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if read := bytesReadSoFar(t) - before; read > want.Size*5/4 {
		t.Errorf("opening a reference of %d bytes read %d", want.Size, read)
	}
	if ref.Reusable() != 1 {
		t.Errorf("Reusable() = %d, want 1", ref.Reusable())
	}
}

// bytesReadSoFar is what this process has read from files (rchar of /proc/self/io).
func bytesReadSoFar(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("/proc/self/io has no rchar")
	return 0
}

// TestReuseLargeEntryChangedAfterOpen: an entry larger than the buffer a worker checks
// entries through is checked whole, and read from the file when a byte past the first
// megabyte changed since the pass.
func TestReuseLargeEntryChangedAfterOpen(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"large": 3 << 20, "small": 100} {
		if err := os.WriteFile(filepath.Join(dir, name), randomData(size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := refArchive(t, dir)
	ref, err := openRef(t, path, DefaultLevel)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if csize := flipDataByte(t, path, "large", 1<<20); csize <= 2*rawBufSize {
		t.Fatalf("large is %d bytes compressed: the test needs more", csize)
	}
	var warnings []string
	_, files := archiveTree(t, dir, Options{Reference: ref, OnWarn: func(err error) { warnings = append(warnings, err.Error()) }})
	for _, f := range files {
		if f.Reused != (f.Path == "small") {
			t.Errorf("%s: reused %v", f.Path, f.Reused)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], format.OpReuse+" large: reference entry damaged") {
		t.Errorf("warnings %q, want one reuse warning for large", warnings)
	}
}

// flipDataByte flips the byte at of the compressed data of the entry name in the archive
// at path, and returns the entry's compressed size.
func flipDataByte(t *testing.T, path, name string, at int64) uint64 {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == name })
	if i < 0 {
		t.Fatalf("no entry %s", name)
	}
	off, err := zr.File[i].DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off+at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^b[0]}, off+at); err != nil {
		t.Fatal(err)
	}
	return zr.File[i].CompressedSize64
}

// TestReuseReadsEntriesOnce: after the pass that proves the reference, a reused entry's
// bytes are read once, by the worker that checks them, and written as it held them; the
// writer read them again to copy them (3 reads of the reference in all, now 2).
func TestReuseReadsEntriesOnce(t *testing.T) {
	reuseReadsOnce(t, 64, 64<<10)
}

// TestReuseReadsLargeEntriesOnce: an entry too large for a worker to hold is read once after
// the pass too, as a worker copies it into the archive when its turn comes; the worker's
// check and the writer's copy read it twice (3 reads of the reference in all, now 2).
func TestReuseReadsLargeEntriesOnce(t *testing.T) {
	zipPath := reuseReadsOnce(t, 4, 3<<20)
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		rc, err := f.Open()
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

// reuseReadsOnce archives n random files of about size bytes with their own archive as the
// reference, and checks that every file is reused and that the run reads no more than 9/4
// of the reference: the pass, one read of each entry, and some slack. It returns the new
// archive, read back only after the count so that its reads do not count.
func reuseReadsOnce(t *testing.T, n, size int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), randomData(size+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := refArchive(t, dir)
	want := fileSum(t, path)
	before := bytesReadSoFar(t)
	ref, err := OpenReference(t.Context(), path, want, format.Deflate, DefaultLevel, ReuseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	zipPath, files := archiveTree(t, dir, Options{Reference: ref})
	if read := bytesReadSoFar(t) - before; read > want.Size*9/4 {
		t.Errorf("a reusing run read %d bytes, %.2f times its reference", read, float64(read)/float64(want.Size))
	}
	for _, f := range files {
		if !f.Reused {
			t.Errorf("%s not reused", f.Path)
		}
	}
	return zipPath
}

// TestReuseLargeEntryDiskFull: a write of the archive that fails while a worker copies a
// large reference entry into it is the run's error, wherever it comes, and nothing waits
// for ever: not the worker waiting for its entry's turn, nor the writer waiting for it.
func TestReuseLargeEntryDiskFull(t *testing.T) {
	dir := t.TempDir()
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), randomData(3<<20+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := refArchive(t, dir)
	for _, limit := range []int{0, 100, 1 << 20, 5 << 20, 9 << 20} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			ref, err := openRef(t, path, DefaultLevel)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			out := t.TempDir()
			w, err := Create(t.Context(), out, "a.zip", Options{Method: format.Deflate, Level: DefaultLevel, Reference: ref,
				Output: func(f *os.File) io.Writer { return &fullDisk{w: f, limit: limit} }})
			if err != nil {
				t.Fatal(err)
			}
			var addErr error
			held := heldFiles(t, dir)
			for i := range 4 {
				f := held["f"+strconv.Itoa(i)]
				if addErr != nil {
					f.src.Release()
					continue
				}
				addErr = w.AddFile(f.src, "f"+strconv.Itoa(i), f.info, &format.Meta{})
			}
			_, err = w.CloseManifest(&format.Manifest{})
			if addErr != nil {
				err = addErr
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("got %v, want ENOSPC", err)
			}
			w.Abort()
		})
	}
}
