package format

import (
	"testing"
	"unsafe"
)

// A run holds a File for every file it stores, and verify one for every file of the
// manifest: at a million files each byte of it is a MB. RawSHA256, which only v2 manifests
// carry, is a pointer so that the v3 ones do not pay 32 bytes for it.
func TestFileSizeBound(t *testing.T) {
	if n := unsafe.Sizeof(File{}); n > 96 {
		t.Errorf("a File is %d bytes; want at most 96", n)
	}
}
