package archive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"backup/atomicfile"
)

// TestChunksArePrimed checks that each chunk of a large file is compressed with the 32 KiB
// before it as a dictionary: a 16 KiB random block repeated over three chunks must cost about
// one block, not one block per chunk.
func TestChunksArePrimed(t *testing.T) {
	block := randomData(16 << 10)
	data := bytes.Repeat(block, 3*chunkSize/len(block))
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"repeated": data})
	path, _ := writeArchive(t, dir, Options{Level: 1})
	got, _ := readArchive(t, path)
	if !bytes.Equal(got["repeated"], data) {
		t.Fatal("content differs after the round trip")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Unprimed chunks would each start with the block in literals: 3 × 16 KiB at least (71 KB
	// measured, against 38 KB primed).
	if max := int64(3 * len(block)); info.Size() > max {
		t.Errorf("archive is %d bytes, want at most %d: chunks not primed with the previous 32 KiB", info.Size(), max)
	}
}

func TestSpoolBudget(t *testing.T) {
	cfg := newSpoolConfig(t.TempDir(), 100, 150)
	a, b := cfg.newSpool(), cfg.newSpool()
	a.Write(bytes.Repeat([]byte("a"), 90)) // in memory: 60 left
	b.Write(bytes.Repeat([]byte("b"), 70)) // over the budget: spills
	if a.file != nil || b.file == nil {
		t.Fatalf("a spilled %v, b spilled %v; want only b on disk", a.file != nil, b.file != nil)
	}
	if name := spoolName(t, b.file); strings.Contains(name, atomicfile.SpoolPrefix) {
		t.Errorf("the spool had a name in its folder (%s): a run killed before its removal left it", name)
	}
	a.Write(bytes.Repeat([]byte("a"), 20)) // over the limit of one spool: spills
	if a.file == nil {
		t.Error("a spool past its own limit stayed in memory")
	}
	for _, c := range []struct {
		s    *spool
		want string
	}{{a, string(bytes.Repeat([]byte("a"), 110))}, {b, string(bytes.Repeat([]byte("b"), 70))}} {
		var out bytes.Buffer
		if _, err := c.s.copyTo(&out, make([]byte, 7)); err != nil || out.String() != c.want {
			t.Errorf("spool gave back %d bytes (%v), want %d", out.Len(), err, len(c.want))
		}
		c.s.Close()
	}
	if got := cfg.budget.Load(); got != 150 {
		t.Errorf("budget after Close %d, want all 150 back", got)
	}
}

// TestAbortMidway stops a run with chunks in flight: Abort must return, and leave nothing.
func TestAbortMidway(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{"big": textData(6 * chunkSize), "small": []byte("x")})
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	w, err := Create(ctx, out, "a.zip", Options{Level: 9, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	addTree(t, w, dir)
	cancel()
	if err := w.Wait(); err == nil {
		t.Error("Wait after cancel returned no error")
	}
	w.Abort()
	if left, _ := filepath.Glob(filepath.Join(out, "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// spoolName is the kernel's name for the open spool f: "/dir/#123 (deleted)" for a file
// made unnamed, "/dir/.backup-spool-1 (deleted)" for one named and removed. The test is
// skipped where f's file system makes no unnamed files.
func spoolName(t *testing.T, f *os.File) string {
	t.Helper()
	name, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(filepath.Dir(name), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Skipf("%s makes no unnamed files: %v", filepath.Dir(name), err)
	}
	unix.Close(fd)
	return name
}
