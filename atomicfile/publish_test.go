package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// inject makes the n-th call (from 1) of op ("rename" or "sync") fail with EIO; with
// sticky, every later call of op fails too, so that the rollback fails as well.
func inject(t *testing.T, op string, n int, sticky bool) {
	t.Helper()
	realRename, realSync := renameat2, syncDir
	t.Cleanup(func() { renameat2, syncDir = realRename, realSync })
	calls := 0
	fail := func() bool {
		calls++
		return calls == n || sticky && calls > n
	}
	switch op {
	case "rename":
		renameat2 = func(from, to string, flags uint) error {
			if fail() {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
			}
			return realRename(from, to, flags)
		}
	case "sync":
		syncDir = func(dir string) error {
			if fail() {
				return &fs.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
			}
			return realSync(dir)
		}
	default:
		t.Fatalf("unknown op %q", op)
	}
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

func TestPublishRollsBack(t *testing.T) {
	layouts := []struct {
		name       string
		old, apart bool
	}{
		{"no old pair", false, false},
		{"old pair replaced", true, false},
		{"receipt in another folder", false, true},
		{"old pair, receipt in another folder", true, true},
	}
	for _, l := range layouts {
		faults := []struct {
			op string
			n  int
		}{{"rename", 1}, {"rename", 2}, {"sync", 1}}
		if l.apart {
			faults = append(faults, struct {
				op string
				n  int
			}{"sync", 2})
		}
		for _, f := range faults {
			t.Run(fmt.Sprintf("%s/%s %d fails", l.name, f.op, f.n), func(t *testing.T) {
				p := layout(t, l.old, l.apart)
				files := p.stage(t, true)
				inject(t, f.op, f.n, false)
				err := Publish(files...)
				var pe *Error
				if !errors.As(err, &pe) || !errors.Is(err, syscall.EIO) {
					t.Fatalf("Publish: %v; want an *Error wrapping EIO", err)
				}
				if !strings.HasSuffix(err.Error(), "; the final paths are as they were") || len(pe.Stuck) > 0 {
					t.Errorf("error %q, stuck %q; want it to say the final paths are as they were", err, pe.Stuck)
				}
				if got := content(t, p.archive); got != p.oldArchive {
					t.Errorf("archive holds %q, want %q", got, p.oldArchive)
				}
				if got := content(t, p.receipt); got != p.oldReceipt {
					t.Errorf("receipt holds %q, want %q", got, p.oldReceipt)
				}
				p.assertOnly(t)
			})
		}
	}
}

// TestPublishRollbackFails makes every rename after the receipt's fail, so the archive
// cannot be put back: the error must say what is at its final path and where the old one
// is.
func TestPublishRollbackFails(t *testing.T) {
	tests := []struct {
		name string
		old  bool
	}{{"no old pair", false}, {"old pair", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := layout(t, tt.old, false)
			files := p.stage(t, true)
			inject(t, "rename", 2, true)
			err := Publish(files...)
			var pe *Error
			if !errors.As(err, &pe) || len(pe.Stuck) != 1 {
				t.Fatalf("Publish: %v; want an *Error with the archive stuck", err)
			}
			if got := content(t, p.archive); got != "new archive" {
				t.Errorf("archive holds %q, want the new one, as the error says", got)
			}
			if got := content(t, p.receipt); got != p.oldReceipt {
				t.Errorf("receipt holds %q, want %q", got, p.oldReceipt)
			}
			want := p.archive + " holds the new file"
			if tt.old {
				want += " and its old one is at " + files[0].Temp
				if got := content(t, files[0].Temp); got != p.oldArchive {
					t.Errorf("the old archive's copy holds %q, want %q", got, p.oldArchive)
				}
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name       string
		old, apart bool
	}{
		{"no old pair", false, false},
		{"old pair replaced", true, false},
		{"receipt in another folder", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := layout(t, tt.old, tt.apart)
			if err := Publish(p.stage(t, true)...); err != nil {
				t.Fatal(err)
			}
			if got := content(t, p.archive); got != "new archive" {
				t.Errorf("archive holds %q, want the new one", got)
			}
			if got := content(t, p.receipt); got != "new receipt" {
				t.Errorf("receipt holds %q, want the new one", got)
			}
			p.assertOnly(t)
		})
	}
}

func TestPublishRefuses(t *testing.T) {
	t.Run("existing archive without replace", func(t *testing.T) {
		p := layout(t, true, false)
		err := Publish(p.stage(t, false)...)
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Publish: %v; want fs.ErrExist", err)
		}
		if got := content(t, p.archive); got != p.oldArchive {
			t.Errorf("archive holds %q, want %q", got, p.oldArchive)
		}
		p.assertOnly(t)
	})
	t.Run("receipt at the archive's path", func(t *testing.T) {
		p := layout(t, false, false)
		p.receipt, p.oldArchive = p.archive, "old archive"
		writeFile(t, p.archive, p.oldArchive)
		err := Publish(p.stage(t, true)...)
		if err == nil || !strings.Contains(err.Error(), "two files at "+p.archive) {
			t.Fatalf("Publish: %v; want a refusal naming %s", err, p.archive)
		}
		if got := content(t, p.archive); got != p.oldArchive {
			t.Errorf("archive holds %q, want %q", got, p.oldArchive)
		}
		p.assertOnly(t)
	})
	t.Run("a folder at the receipt's path", func(t *testing.T) {
		p := layout(t, false, false)
		files := p.stage(t, true)
		if err := os.Mkdir(p.receipt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Publish(files...); !errors.Is(err, syscall.EISDIR) {
			t.Fatalf("Publish: %v; want EISDIR", err)
		}
		if exists(p.archive) {
			t.Error("the new archive is in place without its receipt")
		}
		p.assertOnly(t)
	})
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
