package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadRegularOversize: a receipt planted as a sparse file larger than the
// limit (truncate -s 2G app-….zip.receipt.json in a set costs no disk). ReadRegular knows
// its size from the fstat it makes anyway, yet read limit+1 bytes into memory before
// refusing it: with the receipts' 1 GiB limit, `backup verify --receipt` of such a file
// took 24 s and 2.1 GB of memory to say "larger than 1073741824 bytes", and every status,
// sets, prune and verify of the set pays that for each planted receipt (a fleet's `backup
// sets` holds one per set it reads). Here with a 16 MiB limit and a 64 MiB sparse file: the
// refusal should cost next to nothing.
func TestReadRegularOversize(t *testing.T) {
	const limit = 16 << 20
	path := filepath.Join(t.TempDir(), "x.receipt.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 * limit); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadRegular(path, limit)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a file of 4 times the limit was read")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit/4 {
		t.Errorf("refusing a file of %d bytes (limit %d), whose size fstat gives, allocated %d bytes: it was read first (%v)", 4*limit, limit, alloc, err)
	}
}
