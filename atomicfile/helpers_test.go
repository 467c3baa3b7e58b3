package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fault is a failure to inject into Publish's system calls.
type fault struct {
	op         string // "rename" or "sync": its n-th call (from 1) fails with EIO; "": none
	n          int
	sticky     bool // every later call of op fails too, so that the rollback fails as well
	noExchange bool // RENAME_EXCHANGE fails with EINVAL, as on exFAT
}

// inject installs f for the rest of the test, and returns the number of renames made so
// far (an EINVAL for RENAME_EXCHANGE not counted).
func inject(t *testing.T, f fault) *int {
	t.Helper()
	realRename, realSync := renameat2, syncDir
	t.Cleanup(func() { renameat2, syncDir = realRename, realSync })
	renames, syncs := 0, 0
	fail := func(op string, calls int) bool {
		return op == f.op && (calls == f.n || f.sticky && calls > f.n)
	}
	renameat2 = func(from, to string, flags uint) error {
		if f.noExchange && flags&unix.RENAME_EXCHANGE != 0 {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EINVAL}
		}
		renames++
		if fail("rename", renames) {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
		}
		return realRename(from, to, flags)
	}
	syncDir = func(dir string) error {
		syncs++
		if fail("sync", syncs) {
			return &fs.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
		}
		return realSync(dir)
	}
	return &renames
}

// pair is an archive and its receipt: their final paths, and what was there before the
// publish ("" for nothing).
type pair struct {
	archive, receipt       string
	oldArchive, oldReceipt string
}

// layout makes the folders of a pair under root, the receipt in a folder of its own when
// apart is set, and writes the old files when old is set.
func layout(t *testing.T, old, apart bool) pair {
	t.Helper()
	root := t.TempDir()
	p := pair{archive: filepath.Join(root, "a", "x.zip"), receipt: filepath.Join(root, "a", "x.zip.receipt.json")}
	if apart {
		p.receipt = filepath.Join(root, "r", "x.json")
	}
	for _, path := range []string{p.archive, p.receipt} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if old {
		p.oldArchive, p.oldReceipt = "old archive", "old receipt"
		writeFile(t, p.archive, p.oldArchive)
		writeFile(t, p.receipt, p.oldReceipt)
	}
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stage stages the new pair; the archive replaces an old one only when replace is set.
func (p pair) stage(t *testing.T, replace bool) []*Staged {
	t.Helper()
	a, err := Stage(p.archive, []byte("new archive"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a.NoReplace = !replace
	r, err := Stage(p.receipt, []byte("new receipt"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return []*Staged{a, r}
}

// content is the file at path, or "" when there is none.
func content(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// assertOnly checks that the pair's folders hold nothing but what is at its final paths:
// no temp file, no old copy left behind.
func (p pair) assertOnly(t *testing.T) {
	t.Helper()
	for _, dir := range []string{filepath.Dir(p.archive), filepath.Dir(p.receipt)} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if path := filepath.Join(dir, e.Name()); path != p.archive && path != p.receipt {
				t.Errorf("left behind: %s", path)
			}
		}
	}
}

// countRenames is how many renames a good Publish of the layout makes, counted in a
// subtest of its own so that its injection ends with it.
func countRenames(t *testing.T, old, apart, noExchange bool) (n int) {
	t.Helper()
	t.Run("count renames", func(t *testing.T) {
		p := layout(t, old, apart)
		files := p.stage(t, true)
		renames := inject(t, fault{noExchange: noExchange})
		if err := Publish(files...); err != nil {
			t.Fatal(err)
		}
		n = *renames
	})
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// assertOld checks that the final paths hold what they held before, and nothing else is
// left in their folders.
func (p pair) assertOld(t *testing.T) {
	t.Helper()
	if got := content(t, p.archive); got != p.oldArchive {
		t.Errorf("archive holds %q, want %q", got, p.oldArchive)
	}
	if got := content(t, p.receipt); got != p.oldReceipt {
		t.Errorf("receipt holds %q, want %q", got, p.oldReceipt)
	}
	p.assertOnly(t)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
