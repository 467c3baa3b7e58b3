package archive

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backup/format"
	"backup/walker"
)

// mixedData is random bytes and text by turns, as a disk image or a tar of mixed files is.
func mixedData(n int) []byte {
	text := bytes.Repeat([]byte("a line of text that deflates well, over and over\n"), 1<<14)
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = append(b, randomData(300<<10+i)...)
		b = append(b, text[:(i%5+1)<<17]...)
	}
	return b[:n]
}

// build writes an archive of the files of dir named in names, in that order: into a file
// (Create) when toFile is set, otherwise as a stream, which never streams an entry. It
// returns the archive's bytes, the number of entries streamed, the bytes written in all
// (more than the archive when some were taken back) and the warnings.
func build(t *testing.T, dir string, names []string, toFile bool, opts Options) ([]byte, int, int64, []error) {
	t.Helper()
	files := heldFiles(t, dir)
	var warns []error
	opts.OnWarn = func(err error) { warns = append(warns, err) }
	m := &format.Manifest{Schema: format.ManifestSchema, Status: "complete"}
	opts.OnFile = func(f format.File) { m.Files = append(m.Files, f) }
	var w *Writer
	var err error
	var written int64
	var stream bytes.Buffer
	if toFile {
		opts.Output = func(f *os.File) io.Writer { return &countingFile{f: f, n: &written} }
		w, err = Create(t.Context(), t.TempDir(), "t.zip", opts)
	} else {
		w, err = CreateStream(t.Context(), &stream, t.TempDir(), opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, name := range names {
		if err := w.AddFile(files[name].src, name, files[name].info, nil); err != nil {
			t.Fatal(err)
		}
		delete(files, name)
	}
	for _, f := range files {
		f.src.Release()
	}
	if err := w.Wait(); err != nil { // OnFile has been told of every file
		t.Fatal(err)
	}
	slices.SortFunc(m.Files, func(a, b format.File) int { return strings.Compare(a.Path, b.Path) })
	sum, err := w.CloseManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if !toFile {
		return stream.Bytes(), w.streamed, int64(stream.Len()), warns
	}
	// The read-back's digest of the file must be the one taken as it was written, entries
	// taken back or not (their hashes' states restored).
	if res, err := ReadBack(t.Context(), w.TempPath(), m, sum, VerifyOptions{}); err != nil || !res.OK() {
		t.Fatalf("read back: %v %+v", err, res)
	}
	data, err := os.ReadFile(w.TempPath())
	if err != nil {
		t.Fatal(err)
	}
	return data, w.streamed, written, warns
}

type countingFile struct {
	f *os.File
	n *int64
}

func (c *countingFile) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	*c.n += int64(n)
	return n, err
}

func writeBytes(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStreamedMatchesSpooled: a large entry written into the archive as it is read has the
// bytes it has when spooled first (a stream output never streams an entry), for any number
// of jobs; and every reader accepts its data descriptor.
func TestStreamedMatchesSpooled(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.txt", "big1.bin", "big2.bin", "c.txt", "big3.bin", "zz.txt"}
	writeTree(t, dir, map[string][]byte{
		"a.txt": []byte("small\n"), "big1.bin": mixedData(9 << 20), "big2.bin": mixedData(3<<20 + 7),
		"c.txt": bytes.Repeat([]byte("c"), 5000), "big3.bin": mixedData(chunkSize), "zz.txt": nil,
	})
	want, streamed, _, _ := build(t, dir, names, false, Options{Level: DefaultLevel, Jobs: 1})
	if streamed != 0 {
		t.Fatalf("%d entries streamed into a stream output, want none", streamed)
	}
	for _, jobs := range []int{1, 2, 4} {
		got, streamed, _, warns := build(t, dir, names, true, Options{Level: DefaultLevel, Jobs: jobs})
		// Which entries stream depends on how soon the writing goroutine gets to them; with
		// one job, the 9 MiB one at least has its turn long before its end.
		if jobs == 1 && streamed == 0 {
			t.Errorf("jobs 1: no entry streamed")
		}
		if len(warns) != 0 || !bytes.Equal(got, want) {
			t.Errorf("jobs %d (%d streamed): %d bytes, %v; want the %d bytes of the spooled archive", jobs, streamed, len(got), warns, len(want))
		}
	}
	path := writeBytes(t, want)
	data, _ := readArchive(t, path)
	if !bytes.Equal(data["big1.bin"], mixedData(9<<20)) {
		t.Errorf("big1.bin read back differs")
	}
	unzipTest(t, path)
	pythonTest(t, path)
	if res, err := Verify(t.Context(), path, VerifyOptions{}); err != nil || !res.OK() {
		t.Errorf("Verify: %v, %+v", err, res)
	}
}

// failingOpen makes the file bad fail with EIO after good bytes, and makes the fstat after
// the first read of changed report another mtime.
func failingOpen(good int64) func(walker.Handle, string) (SourceFile, error) {
	opened := 0
	return func(src walker.Handle, name string) (SourceFile, error) {
		f, err := src.OpenRaw()
		switch {
		case err != nil:
			return nil, err
		case name == "bad.bin":
			return &FailingSource{SourceFile: f, Good: good}, nil
		case name == "changed.bin":
			opened++
			if opened == 1 {
				return &touchedFile{File: f}, nil
			}
		}
		return f, nil
	}
}

// FailingSource fails with EIO once it has given Good bytes (fault_test.go uses it too).
type FailingSource struct {
	SourceFile
	Good int64
}

func (f *FailingSource) Read(p []byte) (int, error) {
	if f.Good <= 0 {
		return 0, syscall.EIO
	}
	n, err := f.SourceFile.Read(p[:min(int64(len(p)), f.Good)])
	f.Good -= int64(n)
	return n, err
}

// touchedFile reports a later mtime from its second fstat on: it changed while read.
type touchedFile struct {
	*walker.File
	stats int
}

func (f *touchedFile) Stat() (fs.FileInfo, error) {
	info, err := f.File.Stat()
	if f.stats++; f.stats > 1 && err == nil {
		info = laterInfo{info}
	}
	return info, err
}

type laterInfo struct{ fs.FileInfo }

func (i laterInfo) ModTime() time.Time { return i.FileInfo.ModTime().Add(time.Second) }

// TestStreamedEntryTakenBack: a file whose read fails after part of it went into the
// archive leaves nothing of it there, and a file that changed while it was streamed is
// taken back and read again: the archive is byte for byte the one made without them (the
// one that changed read once, cleanly).
func TestStreamedEntryTakenBack(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"a.txt": []byte("small\n"), "bad.bin": mixedData(20 << 20), "changed.bin": mixedData(6 << 20),
		"c.txt": bytes.Repeat([]byte("c"), 5000),
	})
	opts := Options{Level: DefaultLevel, Jobs: 1}
	want, _, _, _ := build(t, dir, []string{"a.txt", "changed.bin", "c.txt"}, true, opts)
	opts.Open = failingOpen(12 << 20)
	got, streamed, written, warns := build(t, dir, []string{"a.txt", "bad.bin", "changed.bin", "c.txt"}, true, opts)
	if len(warns) != 1 || !isLostRead(warns[0], "bad.bin") {
		t.Errorf("warnings %v, want one failed read of bad.bin", warns)
	}
	if streamed != 1 || written < int64(len(got))+12<<20/2 {
		t.Errorf("%d entries streamed, %d bytes written for an archive of %d; want changed.bin streamed, and bad.bin's bytes and its first copy taken back", streamed, written, len(got))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("archive of %d bytes, want the %d bytes of the archive without bad.bin", len(got), len(want))
	}
	unzipTest(t, writeBytes(t, got))
}

func isLostRead(err error, name string) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Op == format.OpRead && pe.Path == name
}

// pausingFile pauses after a number of bytes.
type pausingFile struct {
	*walker.File
	left int64  // bytes until the pause; < 0 once past it
	wait func() // the pause
}

func (f *pausingFile) Read(p []byte) (int, error) {
	if f.left == 0 {
		f.wait()
		f.left = -1
	}
	if f.left > 0 {
		p = p[:min(int64(len(p)), f.left)]
	}
	n, err := f.File.Read(p)
	if f.left > 0 {
		f.left -= int64(n)
	}
	return n, err
}

// TestSpooledThenStreamed: an entry read while the one before it still had its turn goes
// into its spool (in memory, then in a temp file); when its turn comes, what was spooled is
// copied into the archive and the rest streams. The bytes are still those of an archive
// whose entries were all spooled.
func TestSpooledThenStreamed(t *testing.T) {
	dir := t.TempDir()
	names := []string{"big1.bin", "big2.bin"}
	writeTree(t, dir, map[string][]byte{"big1.bin": mixedData(6 << 20), "big2.bin": mixedData(24 << 20)})
	want, _, _, _ := build(t, dir, names, false, Options{Level: DefaultLevel, Jobs: 2})
	first := make(chan struct{})
	open := func(src walker.Handle, name string) (SourceFile, error) {
		f, err := src.OpenRaw()
		if err != nil {
			return nil, err
		}
		if name == "big1.bin" {
			// big1 waits at its end until big2 has spooled some of its bytes.
			return &pausingFile{File: f, left: 6<<20 - 1, wait: func() { <-first }}, nil
		}
		return &pausingFile{File: f, left: 12 << 20, wait: func() {
			close(first)
			time.Sleep(300 * time.Millisecond) // for big1 to be written, and big2's turn to come
		}}, nil
	}
	got, streamed, _, warns := build(t, dir, names, true, Options{Level: DefaultLevel, Jobs: 2, Open: open})
	if streamed != 2 || len(warns) != 0 {
		t.Errorf("%d entries streamed, warnings %v; want both streamed, big2 part way", streamed, warns)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("archive of %d bytes, want the %d bytes of the spooled one", len(got), len(want))
	}
}
