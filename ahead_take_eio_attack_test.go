package main

import (
	"bytes"
	le "encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestAttackAheadTakeDropsDataAtEIO: take() checks Go's record of the manifest with dataAt
// (its local header, 60 bytes here, and its data descriptor, read as 24), and its error is
// the manifest's, as before the manifest was read ahead (exit 1, "input/output error").
// It was dropped (attack pass 22): a transient EIO on either read (strace -e
// inject=pread64:error=EIO:when=N on a.zip, N = 1..40) had the manifest read again, the
// second read succeeded, and backup list exited 0 without a word of the I/O error.
func TestAttackAheadTakeDropsDataAtEIO(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	_, arch := attackSpanTree(t, dir, 300, 0)
	data, err := os.ReadFile(arch)
	if err != nil {
		t.Fatal(err)
	}
	loc := bytes.LastIndex(data, []byte("PK\x03\x04")) // the manifest's local header: it is last
	p := bytes.LastIndex(data, []byte("PK\x05\x06"))
	dirOff := int(le.LittleEndian.Uint32(data[p+16:]))
	targets := []string{fmt.Sprintf(", 60, %d) = -1 EIO", loc), fmt.Sprintf(", 24, %d) = -1 EIO", dirOff-16)}
	hit := 0
	for range 3 {
		for n := 1; n <= 40; n++ {
			injected, out, code := withEIO(t, dir, arch, n, "list", arch)
			if len(injected) != 1 || !strings.Contains(injected[0], targets[0]) && !strings.Contains(injected[0], targets[1]) {
				continue
			}
			hit++
			if code == exitComplete && !strings.Contains(out, "input/output error") {
				t.Errorf("backup list: EIO injected on a read of the manifest's headers (pread64 #%d):\n%s\nyet exit 0 and no word of it:\n%s",
					n, injected[0], lastLines(out, 3))
			}
		}
	}
	if hit == 0 {
		t.Fatal("no run had its one EIO on a read of the manifest's headers")
	}
}
