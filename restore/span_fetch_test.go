package restore

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"backup/archive"
	"backup/format"
)

// blockReaderAt records which blocks of blockSize bytes are read, as an archive in a
// bucket fetches them (backupset/s3store reads by 1 MiB blocks, one GET each).
type blockReaderAt struct {
	io.ReaderAt
	mu     sync.Mutex
	armed  bool
	blocks map[int64]bool
}

const testBlock = 1 << 20

func (b *blockReaderAt) ReadAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	if b.armed && len(p) > 0 {
		for i := off / testBlock; i <= (off+int64(len(p))-1)/testBlock; i++ {
			b.blocks[i] = true
		}
	}
	b.mu.Unlock()
	return b.ReaderAt.ReadAt(p, off)
}

// rawStored adds a stored entry without a data descriptor (its sizes in its local header,
// as backup writes most entries).
func rawStored(t *testing.T, zw *zip.Writer, name string, body []byte) {
	t.Helper()
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(body),
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
}

// storedFile is an entry of storedZip.
type storedFile struct {
	name string
	body []byte
}

// storedZip is a zip of files stored without data descriptors, in order, with a manifest
// that lists them when manifest is set.
func storedZip(t *testing.T, files []storedFile, manifest bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	m := &format.Manifest{ToolVersion: "test", Status: "complete", Skipped: []format.Skipped{},
		Excluded: []format.Excluded{}, Warnings: []format.Warning{}}
	for _, f := range files {
		rawStored(t, zw, f.name, f.body)
		m.Files = append(m.Files, format.File{Path: f.name, Size: int64(len(f.body)), SHA256: format.Digest(sha256.Sum256(f.body))})
	}
	if manifest {
		addManifest(t, zw, m)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// restoreBlocks plans and runs the restore of the files named include from data into
// dest with jobs workers, reading data as an archive in a bucket is read, and returns the
// plan, its result and the blocks read, in order.
func restoreBlocks(t *testing.T, data []byte, dest string, jobs int, include ...string) (*Plan, *Result, []int64) {
	t.Helper()
	src := &blockReaderAt{ReaderAt: bytes.NewReader(data), blocks: map[int64]bool{}}
	r, err := archive.NewReader(src, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.armed = true
	src.mu.Unlock()
	plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: jobs, Include: func(name string, _ bool) bool { return slices.Contains(include, name) }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatalf("jobs %d: Run: %v", jobs, err)
	}
	var read []int64
	for b := range src.blocks {
		read = append(read, b)
	}
	slices.Sort(read)
	return plan, res, read
}

// destHolding is a new DEST holding the file small with body.
func destHolding(t *testing.T, body []byte) string {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "dest")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "small"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	return dest
}

// TestRestoreIncludeReadsNoFurtherThanAlone: restoring one small entry reads no block of the
// archive that reading it alone does not: an entry without a data descriptor whose data end
// just before a block boundary must not cost the next block (a GET of 1 MiB from a bucket,
// or the next age chunks of an encrypted archive), in the plan's check or in the run.
func TestRestoreIncludeReadsNoFurtherThanAlone(t *testing.T) {
	const small, gap = 1000, 8
	body := bytes.Repeat([]byte{'s'}, small)
	// pad's header is 30+3 bytes, small's 30+5: small's data end gap bytes before 1 MiB.
	padLen := testBlock - gap - small - (30 + 5) - (30 + 3)
	data := storedZip(t, []storedFile{{"pad", bytes.Repeat([]byte{'p'}, padLen)}, {"small", body},
		{"big", bytes.Repeat([]byte{'b'}, 2*testBlock)}}, false)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if at, _ := zr.File[1].DataOffset(); at+small != testBlock-gap {
		t.Fatalf("small's data end at %d; the test wants %d", at+small, testBlock-gap)
	}
	for _, jobs := range []int{1, 4} {
		dest := filepath.Join(t.TempDir(), "dest")
		_, res, read := restoreBlocks(t, data, dest, jobs, "small")
		if res.Files != 1 {
			t.Fatalf("jobs %d: %d files restored, want 1", jobs, res.Files)
		}
		if got := readTestFile(t, filepath.Join(dest, "small")); !bytes.Equal(got, body) {
			t.Errorf("jobs %d: small holds %d bytes, not its own", jobs, len(got))
		}
		if !slices.Equal(read, []int64{0}) {
			t.Errorf("jobs %d: restoring small (in block 0, ending %d bytes before block 1) read blocks %v; want [0]", jobs, gap, read)
		}
	}
}

// TestRestorePresentReadsNoData: a file DEST holds already is kept, and its data are not read
// from the archive, in the plan's check of its local header either: when its header lies in
// one block and its data in the next, only the header's block is read (from a bucket, the
// next block would be a GET of 1 MiB for a file restore does not write).
func TestRestorePresentReadsNoData(t *testing.T) {
	body := bytes.Repeat([]byte{'s'}, 4000)
	// pad's header is 30+3 bytes, small's 30+5: small's header ends 100 bytes before 1 MiB,
	// and its data cross into the next block.
	padLen := testBlock - 100 - (30 + 5) - (30 + 3)
	data := storedZip(t, []storedFile{{"pad", bytes.Repeat([]byte{'p'}, padLen)}, {"small", body},
		{"big", bytes.Repeat([]byte{'b'}, 2*testBlock)}}, true)
	for _, jobs := range []int{1, 4} {
		plan, res, read := restoreBlocks(t, data, destHolding(t, body), jobs, "small")
		if plan.Present != 1 || res.Files != 0 || len(res.Damaged) != 0 {
			t.Fatalf("jobs %d: %d files present, %d restored, damaged %v; want 1, 0, none", jobs, plan.Present, res.Files, res.Damaged)
		}
		if !slices.Equal(read, []int64{0}) {
			t.Errorf("jobs %d: keeping small (its header in block 0, its data in block 1) read blocks %v; want [0]", jobs, read)
		}
	}
}

// TestRestorePresentNeighbourReadsNoData: a file DEST holds already is not read by the
// worker that restores its neighbour in the archive either: the neighbour's span stops
// before the kept file's data, which may lie in a block nothing else needs.
func TestRestorePresentNeighbourReadsNoData(t *testing.T) {
	body := bytes.Repeat([]byte{'s'}, 4000)
	// Headers of 30 bytes and the name: small's ends 100 bytes before 1 MiB, and its data
	// cross into the next block.
	padLen := testBlock - 100 - (30 + 5) - (30 + 1) - 1000 - (30 + 3)
	data := storedZip(t, []storedFile{{"pad", bytes.Repeat([]byte{'p'}, padLen)}, {"a", bytes.Repeat([]byte{'a'}, 1000)},
		{"small", body}, {"big", bytes.Repeat([]byte{'b'}, 2*testBlock)}}, true)
	for _, jobs := range []int{1, 4} {
		plan, res, read := restoreBlocks(t, data, destHolding(t, body), jobs, "small", "a")
		if plan.Present != 1 || res.Files != 1 || len(res.Damaged) != 0 {
			t.Fatalf("jobs %d: %d files present, %d restored, damaged %v; want 1, 1, none", jobs, plan.Present, res.Files, res.Damaged)
		}
		if !slices.Equal(read, []int64{0}) {
			t.Errorf("jobs %d: restoring a and keeping small (its header in block 0, its data in block 1) read blocks %v; want [0]", jobs, read)
		}
	}
}

// cancelReaderAt cancels its context at the first read once armed, and counts the reads.
type cancelReaderAt struct {
	io.ReaderAt
	armed  atomic.Bool
	cancel context.CancelFunc
	reads  atomic.Int64
}

func (c *cancelReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.armed.Load() && c.reads.Add(1) == 1 {
		c.cancel()
	}
	return c.ReaderAt.ReadAt(p, off)
}

// TestPlanHeaderCheckInterrupted: an interrupt during the plan's check of the selected
// entries' local headers stops it at the spans in hand, one a goroutine of the check's. The
// check once took no context and read every span (a request each from a bucket) before the
// plan noticed: 33 s after Ctrl-C on a slow archive of 4,000 files.
func TestPlanHeaderCheckInterrupted(t *testing.T) {
	var files []storedFile
	for i := range 400 {
		files = append(files, storedFile{fmt.Sprintf("f%03d", i), bytes.Repeat([]byte{byte(i)}, 4096)})
	}
	data := storedZip(t, files, true)
	ctx, cancel := context.WithCancel(t.Context())
	src := &cancelReaderAt{ReaderAt: bytes.NewReader(data), cancel: cancel}
	r, err := archive.NewReader(src, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	src.armed.Store(true)
	dest := filepath.Join(t.TempDir(), "dest")
	if _, err := NewPlan(ctx, r, dest, Options{Jobs: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("NewPlan: %v, want context.Canceled", err)
	}
	if n, most := src.reads.Load(), int64(min(runtime.GOMAXPROCS(0), 4)); n > most {
		t.Errorf("%d reads of the archive; want at most %d, one a goroutine (7 spans)", n, most)
	}
}
