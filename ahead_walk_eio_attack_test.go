package main

import (
	"bytes"
	le "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attackAlignedDirArchive archives 500 small files whose names are lengthened until the
// central directory's records fill exactly a multiple of 64 KiB: the walk ahead's bufio
// (64 KiB reads) then reads the manifest's record, the last, whole, and a read of its own
// for the end record after it.
func attackAlignedDirArchive(t *testing.T, dir string) string {
	t.Helper()
	pads := make([]int, 500)
	arch := filepath.Join(dir, "a.zip")
	for round := range 2 {
		src := filepath.Join(dir, "src/app")
		os.RemoveAll(filepath.Join(dir, "src"))
		os.Remove(arch)
		os.Remove(arch + ".receipt.json")
		nodes := map[string]node{}
		for i, p := range pads {
			nodes[fmt.Sprintf("f%04d%s", i, strings.Repeat("x", p))] = node{content: fmt.Sprintf("content %d\n", i)}
		}
		makeTree(t, src, nodes)
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
		b, err := os.ReadFile(arch)
		if err != nil {
			t.Fatal(err)
		}
		p := bytes.LastIndex(b, []byte("PK\x05\x06"))
		dirSize := int(le.LittleEndian.Uint32(b[p+12:]))
		need := (65536 - dirSize%65536) % 65536
		if need == 0 {
			return arch
		}
		if round == 1 {
			t.Fatalf("directory of %d bytes, not a multiple of 64 KiB", dirSize)
		}
		for i := range pads {
			add := min(need, 200)
			pads[i] += add
			if need -= add; need == 0 {
				break
			}
		}
	}
	return arch
}

// TestAttackAheadWalkEIOAfterManifestRecord: EIO on the walk ahead's read past the
// manifest's record (the end record, read alone when the records end on a 64 KiB boundary)
// is reported. It was swallowed (attack pass 22): manifestRecord took any failed read after
// the one record it found as the directory's end and returned that record, the parse
// ahead was taken (Go's record agreed), and verify, list and restore exited 0 without a
// word of the I/O error: strace -e inject=pread64:error=EIO:when=6 (verify; 5 for list
// and restore) on a.zip.
func TestAttackAheadWalkEIOAfterManifestRecord(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := attackAlignedDirArchive(t, dir)
	size := func() int64 { st, _ := os.Stat(arch); return st.Size() }()
	endRead := fmt.Sprintf(", 22, %d) = -1 EIO", size-22)
	hit := 0
	// withEIO runs backup on one thread of Go code, but a read the kernel is slow to answer
	// can still move to another: a sweep that missed the walk's read is tried again.
	for sweep := 0; hit == 0 && sweep < 5; sweep++ {
		hit = sweepAheadWalkEIO(t, dir, arch, endRead, sweep)
	}
	if hit == 0 {
		t.Fatal("no run had its one EIO on the walk's read of the end record")
	}
}

// sweepAheadWalkEIO runs verify, list and restore of arch with EIO on each of their first
// preads in turn, and checks each run whose one injection hit the end record's read. It
// returns how many did.
func sweepAheadWalkEIO(t *testing.T, dir, arch, endRead string, sweep int) int {
	hit := 0
	for _, args := range [][]string{{"verify", arch}, {"list", arch}, {"restore", "--jobs", "1", arch, "DEST"}} {
		for n := 1; n <= 12; n++ {
			a := append([]string(nil), args...)
			if a[0] == "restore" {
				a[len(a)-1] = filepath.Join(dir, fmt.Sprintf("r%d-%d", sweep, n))
			}
			injected, out, code := withEIO(t, dir, arch, n, a...)
			if len(injected) != 1 || !strings.Contains(injected[0], endRead) {
				continue
			}
			hit++
			if code == exitComplete && !strings.Contains(out, "input/output error") {
				t.Errorf("backup %s: EIO injected on the walk's read of the end record (pread64 #%d):\n%s\nyet exit 0 and no word of it:\n%s",
					a[0], n, injected[0], lastLines(out, 3))
			}
		}
	}
	return hit
}
