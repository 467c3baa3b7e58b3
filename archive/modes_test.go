package archive

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"syscall"
	"testing"
)

// hostEnt is one entry made on a given host: its "made by" byte and external attributes.
type hostEnt struct {
	name  string
	host  uint16 // 0 FAT, 3 Unix, 10 NTFS (APPNOTE), 11 NTFS (Go's number), 14 VFAT
	attrs uint32
}

const dosDir = 0x10

// unixAttrs puts a Unix mode where a Unix host keeps it: the high 16 bits.
func unixAttrs(typ, perm uint32) uint32 { return (typ | perm) << 16 }

func hostZip(t *testing.T, entries []hostEnt) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Store, CreatorVersion: e.host<<8 | 20,
			ExternalAttrs: e.attrs, Modified: testTime}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if e.name[len(e.name)-1] != '/' {
			w.Write([]byte("data of " + e.name))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestListModesWithoutUnixMode: list shows the mode restore gives under the usual umask.
func TestListModesWithoutUnixMode(t *testing.T) {
	r := openZip(t, hostZip(t, []hostEnt{
		{"fat/", 0, dosDir}, {"fat/ro", 0, dosReadOnly}, {"jar/", 0, 0}, {"unix0", 3, 0},
		{"unixdir/", 3, unixAttrs(syscall.S_IFDIR, 0o666)},
	}))
	want := map[string]fs.FileMode{"fat": fs.ModeDir | 0o755, "fat/ro": 0o444, "jar": fs.ModeDir | 0o755,
		"unix0": 0o644, "unixdir": fs.ModeDir | 0o766}
	for _, e := range r.Entries {
		if e.Mode != want[e.Name] {
			t.Errorf("%s: mode %v, want %v", e.Name, e.Mode, want[e.Name])
		}
	}
}
