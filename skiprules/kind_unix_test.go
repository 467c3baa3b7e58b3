//go:build unix

package skiprules

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKindOfRealFiles checks KindOf against the modes the OS really reports
// for special files, not just the constants we think it reports.
func TestKindOfRealFiles(t *testing.T) {
	tests := []struct {
		name   string
		create func(t *testing.T, path string) string // returns the path to lstat
		want   Kind
	}{
		{"regular", makeRegular, ""},
		{"directory", makeDir, ""},
		{"symlink", makeSymlink, KindSymlink},
		{"dangling symlink", makeDanglingSymlink, KindSymlink},
		{"socket", makeSocket, KindSocket},
		{"fifo", makeFIFO, KindFIFO},
		{"device node", makeDevice, KindDevice},
		{"/dev/null", func(*testing.T, string) string { return "/dev/null" }, KindDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.create(t, filepath.Join(t.TempDir(), "f"))
			info, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := KindOf(info.Mode()); got != tt.want {
				t.Errorf("KindOf(lstat %s: %v) = %q, want %q", tt.name, info.Mode(), got, tt.want)
			}
		})
	}
}

func makeRegular(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func makeDir(t *testing.T, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func makeSymlink(t *testing.T, path string) string {
	t.Helper()
	target := makeRegular(t, path+".target")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func makeDanglingSymlink(t *testing.T, path string) string {
	t.Helper()
	if err := os.Symlink(path+".missing", path); err != nil {
		t.Fatal(err)
	}
	return path
}

func makeSocket(t *testing.T, path string) string {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return path
}

func makeFIFO(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// makeDevice makes a char device with the device number of /dev/null, so
// the test needs no OS-specific makedev arithmetic. Creating device nodes
// needs root, so the case is skipped otherwise.
func makeDevice(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	null, err := os.Stat("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	st, ok := null.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no Stat_t for /dev/null: %T", null.Sys())
	}
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, int(st.Rdev)); err != nil {
		t.Fatal(err)
	}
	return path
}
