//go:build unix

package skiprules

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"backup/walker"
)

// TestDecideOrder checks which rule wins when several apply, on a real tree
// and on the walker's entries, so that lstat, the self check and CACHEDIR.TAG
// behave as in a backup.
func TestDecideOrder(t *testing.T) {
	root := decideTree(t)
	self := lstat(t, filepath.Join(root, "out.zip"))
	tests := []struct {
		name     string
		rules    Rules
		path     string // below root; "" is root
		rel      string // "" for a source root
		otherDev bool   // pretend the source root is on another device
		want     Decision
	}{
		{"file archived", Rules{}, "file", "file", false, archive()},
		{"self excluded", Rules{Self: []fs.FileInfo{self}}, "out.zip", "out.zip", false, exclude(RuleSelf)},
		{"self beats pattern", Rules{Self: []fs.FileInfo{self}, Exclude: mustParse(t, "*.zip")}, "out.zip", "out.zip", false, exclude(RuleSelf)},
		{"other file not self", Rules{Self: []fs.FileInfo{self}}, "file", "file", false, archive()},
		{"nil self entry ignored", Rules{Self: []fs.FileInfo{nil}}, "file", "file", false, archive()},
		{"pattern excludes file", Rules{Exclude: mustParse(t, "fi*")}, "file", "file", false, exclude("fi*")},
		{"pattern beats kind", Rules{Exclude: mustParse(t, "*.sock")}, "app.sock", "app.sock", false, exclude("*.sock")},
		{"negated pattern leaves kind", Rules{Exclude: mustParse(t, "*.sock", "!app.sock")}, "app.sock", "app.sock", false, skip(KindSocket)},
		{"fifo skipped", Rules{Exclude: mustParse(t, "other")}, "fifo", "fifo", false, skip(KindFIFO)},
		{"symlink to dir is no dir", Rules{Exclude: mustParse(t, "link/")}, "link", "link", false, skip(KindSymlink)},
		{"symlink matched as file", Rules{Exclude: mustParse(t, "link")}, "link", "link", false, exclude("link")},
		{"symlink stored on request", Rules{StoreSymlinks: true}, "link", "link", false, archive()},
		{"stored symlink still excluded", Rules{StoreSymlinks: true, Exclude: mustParse(t, "link")}, "link", "link", false, exclude("link")},
		{"fifo skipped when symlinks are stored", Rules{StoreSymlinks: true}, "fifo", "fifo", false, skip(KindFIFO)},
		{"socket skipped when symlinks are stored", Rules{StoreSymlinks: true}, "app.sock", "app.sock", false, skip(KindSocket)},
		{"dir archived", Rules{ExcludeCaches: true, OneFileSystem: true}, "dir", "dir", false, archive()},
		{"nested dir by rel", Rules{Exclude: mustParse(t, "/dir/sub")}, "dir/sub", "dir/sub", false, exclude("/dir/sub")},
		{"pattern beats cache tag", Rules{ExcludeCaches: true, Exclude: mustParse(t, "cache/")}, "cache", "cache", false, exclude("cache/")},
		{"cache tag", Rules{ExcludeCaches: true}, "cache", "cache", false, exclude(RuleCacheDir)},
		{"cache tag ignored when off", Rules{}, "cache", "cache", false, archive()},
		{"other device beats cache tag, read across", Rules{ExcludeCaches: true, OneFileSystem: true}, "cache", "cache", true, exclude(RuleOtherFS)},
		{"other device", Rules{OneFileSystem: true}, "dir", "dir", true, exclude(RuleOtherFS)},
		{"other device ignored when off", Rules{}, "dir", "dir", true, archive()},
		{"other device only for dirs", Rules{OneFileSystem: true}, "file", "file", true, archive()},
		{"root not excluded by pattern", Rules{Exclude: mustParse(t, "*")}, "", "", false, archive()},
		{"root not excluded by cache tag", Rules{ExcludeCaches: true}, "cache", "", false, archive()},
		{"root not excluded by device", Rules{OneFileSystem: true}, "", "", true, archive()},
		{"root file archived", Rules{Exclude: mustParse(t, "*")}, "file", "", false, archive()},
		{"root symlink skipped", Rules{Exclude: mustParse(t, "*")}, "link", "", false, skip(KindSymlink)},
		{"root still self", Rules{Self: []fs.FileInfo{self}}, "out.zip", "", false, exclude(RuleSelf)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rootDev := DeviceOf(lstat(t, root))
			if tt.otherDev {
				rootDev++
			}
			atEntry(t, root, tt.path, func(e walker.Entry) {
				got := tt.rules.Decide(e, tt.rel, e.Info, rootDev)
				if got != tt.want {
					t.Errorf("Decide(%q, rel %q) = %+v, want %+v", tt.path, tt.rel, got, tt.want)
				}
			})
		})
	}
}

func TestDeviceOfStat(t *testing.T) {
	dir := t.TempDir()
	info := lstat(t, dir)
	want := uint64(info.Sys().(*syscall.Stat_t).Dev)
	if got := DeviceOf(info); got != want || got == 0 {
		t.Errorf("DeviceOf(lstat %s) = %d, want %d (non-zero)", dir, got, want)
	}
}

// decideTree builds the tree TestDecideOrder decides on and returns its root.
func decideTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"dir", "dir/sub", "cache"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"file": "data", "out.zip": "zip", "cache/" + CacheDirTagName: validTag}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("dir", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "app.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return root
}

func lstat(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}
