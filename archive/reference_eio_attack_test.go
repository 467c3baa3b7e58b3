package archive

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackReferenceEIOWordedDamaged: walkCentral now gives a failed read of the central
// directory as the error itself (commit 5ca9ffe), but the reference's readCentral words any
// error of the walk as errNoZip, "not a zip archive, or its central directory is damaged":
// a set run whose reference meets an EIO on its directory says the reference is damaged
// ("backup: reading every file: no unchanged entry is copied: .../src-….zip: not a zip
// archive, or its central directory is damaged", strace -e inject=pread64:error=EIO:when=4
// on the reference of `backup create --output-dir SET src`), and never that a read failed.
func TestAttackReferenceEIOWordedDamaged(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 5 {
		name := "f" + strings.Repeat("x", i)
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte{byte(i)}, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	data, _, _, _ := build(t, dir, names, true, Options{})
	r, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if r.dirStart <= 0 {
		t.Fatalf("dirStart %d", r.dirStart)
	}
	ra := &failFrom{data: data, off: r.dirStart}
	ra.armed.Store(true)
	ref := &Reference{}
	_, err = ref.readCentral(ra, int64(len(data)))
	if ra.hits.Load() == 0 {
		t.Skip("the walk did not read at the directory's start")
	}
	if !errors.Is(err, syscall.EIO) || strings.Contains(fmtErr(err), "damaged") {
		t.Errorf("the reference's central directory read failed with EIO (%d reads): readCentral says %q; want the EIO, no damage",
			ra.hits.Load(), fmtErr(err))
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
