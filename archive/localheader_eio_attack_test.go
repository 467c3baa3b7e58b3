package archive

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackEIOWordedDamaged: commit 5ca9ffe has readLocal's read of the extra field and
// checkDescriptor's read of the data descriptor report a failed read, but words it as
// damage: "damaged: data descriptor unreadable: read …: input/output error". The project's
// rule is that damage is not claimed for what was a failed read; a set run whose reference
// meets an EIO on its manifest's descriptor says "no unchanged entry is copied: …zip:
// damaged: data descriptor unreadable: read …zip: input/output error" (strace -e
// inject=pread64:error=EIO:when=8 on the reference of `backup create --output-dir SET src`).
func TestAttackEIOWordedDamaged(t *testing.T) {
	eio := &failFrom{off: 0}
	eio.armed.Store(true)
	_, err := checkDescriptor(eio, 0, &zip.File{}, false)
	if !errors.Is(err, syscall.EIO) || strings.Contains(fmtErr(err), "damaged") {
		t.Errorf("checkDescriptor on an EIO: %q; want the EIO, without a claim of damage", fmtErr(err))
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _, _, _ := build(t, dir, []string{"f"}, true, Options{})
	if e := int(le16(data[28:])); e == 0 {
		t.Skip("the first local header has no extra field")
	}
	// The extra field is read on its own when the central one is shorter (0 here).
	ra := &failFrom{data: data, off: localLen + 1}
	ra.armed.Store(true)
	_, err = readLocal(localRef{ra: ra, off: 0}, 1, 0)
	if ra.hits.Load() == 0 {
		t.Fatal("the extra field was not read on its own")
	}
	if !errors.Is(err, syscall.EIO) || strings.Contains(fmtErr(err), "damaged") {
		t.Errorf("readLocal on an EIO reading the extra field: %q; want the EIO, without a claim of damage", fmtErr(err))
	}
}
