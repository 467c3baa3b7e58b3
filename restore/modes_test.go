package restore

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// hostEnt is one entry made on a given host: its "made by" byte and external attributes.
type hostEnt struct {
	name  string
	host  uint16 // 0 FAT, 3 Unix, 10 NTFS (APPNOTE), 11 NTFS (Go's number), 14 VFAT
	attrs uint32
}

const (
	dosReadOnly = 0x01
	dosDir      = 0x10
	dosArchive  = 0x20
)

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

// TestRestoreModesWithoutUnixMode restores entries that carry no Unix mode (made on DOS or
// Windows, by the JDK's jar, or on Unix with nothing where the mode goes) as unzip does: 0644
// for files (0444 when DOS says read-only) and 0755 for folders, less the umask. A folder
// always keeps its owner's search bit, so that what it holds stays reachable. Entries with a
// Unix mode keep it exactly, umask or not, as before, 0000 too (with its type bits, as zip and
// backup store it; 0644 before, readable by all).
func TestRestoreModesWithoutUnixMode(t *testing.T) {
	data := hostZip(t, []hostEnt{
		{"fat/", 0, dosDir},
		{"fat/file", 0, dosArchive},
		{"fat/ro", 0, dosReadOnly | dosArchive},
		{"ntfs/", 10, dosDir},
		{"ntfs/file", 10, dosArchive},
		{"nt11/", 11, dosDir},
		{"nt11/file", 11, dosArchive},
		{"vfat/file", 14, 0},
		{"jar/", 0, 0}, // the JDK's jar: host 0, no attributes, a folder by its slash only
		{"jar/Main.class", 0, 0},
		{"unix0", 3, 0},
		{"unixdir/", 3, unixAttrs(syscall.S_IFDIR, 0o666)},
		{"unixdir/inside", 3, unixAttrs(syscall.S_IFREG, 0o640)},
		{"unixfile", 3, unixAttrs(syscall.S_IFREG, 0o664)},
		{"unix000", 3, unixAttrs(syscall.S_IFREG, 0)},
		{"unixdir000/", 3, unixAttrs(syscall.S_IFDIR, 0)},
	})
	tests := []struct {
		umask int
		want  map[string]fs.FileMode
	}{
		{0o022, map[string]fs.FileMode{
			"fat": fs.ModeDir | 0o755, "fat/file": 0o644, "fat/ro": 0o444,
			"ntfs": fs.ModeDir | 0o755, "ntfs/file": 0o644, "nt11": fs.ModeDir | 0o755, "nt11/file": 0o644,
			"vfat/file": 0o644, "jar": fs.ModeDir | 0o755, "jar/Main.class": 0o644, "unix0": 0o644,
			"unixdir": fs.ModeDir | 0o766, "unixdir/inside": 0o640, "unixfile": 0o664,
			"unix000": 0, "unixdir000": fs.ModeDir | 0o100,
		}},
		{0o077, map[string]fs.FileMode{
			"fat": fs.ModeDir | 0o700, "fat/file": 0o600, "fat/ro": 0o400,
			"ntfs": fs.ModeDir | 0o700, "ntfs/file": 0o600, "nt11": fs.ModeDir | 0o700, "nt11/file": 0o600,
			"vfat/file": 0o600, "jar": fs.ModeDir | 0o700, "jar/Main.class": 0o600, "unix0": 0o600,
			"unixdir": fs.ModeDir | 0o766, "unixdir/inside": 0o640, "unixfile": 0o664,
			"unix000": 0, "unixdir000": fs.ModeDir | 0o100,
		}},
	}
	for _, tt := range tests {
		if os.Geteuid() != 0 { // a user keeps the owner's read bit, to read back what it wrote
			tt.want["unix000"], tt.want["unixdir000"] = 0o400, fs.ModeDir|0o500
		}
		t.Run(fs.FileMode(tt.umask).String(), func(t *testing.T) {
			// The umask is the process's: this test must not run in parallel with others.
			old := syscall.Umask(tt.umask)
			defer syscall.Umask(old)
			dest := t.TempDir()
			_, res := restoreInto(t, data, dest, Options{})
			if len(res.Failed)+len(res.Damaged) > 0 {
				t.Fatalf("failed %q damaged %q", problemStrings(res.Failed), problemStrings(res.Damaged))
			}
			for name, want := range tt.want {
				info, err := os.Lstat(filepath.Join(dest, name))
				if err != nil {
					t.Error(err)
					continue
				}
				if info.Mode() != want {
					t.Errorf("%s: mode %v, want %v", name, info.Mode(), want)
				}
			}
			if _, err := os.ReadFile(filepath.Join(dest, "unixdir/inside")); err != nil {
				t.Errorf("unixdir/inside unreachable: %v", err)
			}
		})
	}
}
