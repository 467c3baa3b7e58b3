package restore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"backup/format"
)

// restoreInto plans and, when the plan allows, runs a restore of data into dest.
func restoreInto(t *testing.T, data []byte, dest string, opts Options) (*Plan, *Result) {
	t.Helper()
	r := openZip(t, data)
	plan, err := NewPlan(t.Context(), r, dest, opts)
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}
	if !plan.OK() {
		if _, err := plan.Run(t.Context()); err == nil {
			t.Fatal("Run of a refused plan succeeded")
		}
		return plan, nil
	}
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return plan, res
}

// listTree returns every path below root, slash-separated, with "/" after directories and
// "@" after symlinks.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == root {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case path == root:
			return nil
		case d.IsDir():
			rel += "/"
		case d.Type()&fs.ModeSymlink != 0:
			rel += "@"
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestRestoreRoundTrip(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "new", "dest") // created when missing
	plan, res := restoreInto(t, buildZip(t, sampleTree, true), dest, Options{})
	if res == nil {
		t.Fatalf("refused: %q %q", problemStrings(plan.Refused), plan.Conflicts)
	}
	if len(res.Damaged)+len(res.Failed) > 0 {
		t.Fatalf("damaged %q failed %q", problemStrings(res.Damaged), problemStrings(res.Failed))
	}
	want := []string{"app/", "app/a.txt", "app/empty/", "app/sub/", "app/sub/b.bin", "app/sub/stored", "app/zero"}
	if got := listTree(t, dest); !slices.Equal(got, want) {
		t.Errorf("restored %q, want %q", got, want)
	}
	for _, e := range sampleTree {
		path := filepath.Join(dest, e.name)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !info.ModTime().Equal(testTime) {
			t.Errorf("%s: mtime %v, want %v", e.name, info.ModTime(), testTime)
		}
		if !info.IsDir() {
			if got, _ := os.ReadFile(path); string(got) != e.body {
				t.Errorf("%s: content differs", e.name)
			}
		}
	}
	if res.Files != 4 || res.Dirs != 3 {
		t.Errorf("%d files %d dirs, want 4 and 3", res.Files, res.Dirs)
	}
}

func TestRestoreModes(t *testing.T) {
	old := time.Date(1999, 1, 2, 3, 4, 6, 0, time.UTC)
	entries := []zent{
		{name: "app/", mode: 0o750, mtime: old},
		{name: "app/ro/", mode: 0o500, mtime: old},
		{name: "app/ro/inside", body: "x", mode: 0o400},
		{name: "app/setuid", body: "#!/bin/sh\n", mode: 0o755 | fs.ModeSetuid | fs.ModeSetgid},
		{name: "app/sticky/", mode: 0o777 | fs.ModeSticky},
		{name: "app/private", body: "p", mode: 0o600},
	}
	dest := t.TempDir()
	_, res := restoreInto(t, buildZip(t, entries, true), dest, Options{})
	if len(res.Failed)+len(res.Damaged) > 0 {
		t.Fatalf("failed %q damaged %q", problemStrings(res.Failed), problemStrings(res.Damaged))
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dest, "app/ro"), 0o700) })
	want := map[string]fs.FileMode{
		"app": fs.ModeDir | 0o750, "app/ro": fs.ModeDir | 0o500, "app/ro/inside": 0o400,
		"app/setuid": 0o755, "app/sticky": fs.ModeDir | fs.ModeSticky | 0o777, "app/private": 0o600,
	}
	for name, mode := range want {
		info, err := os.Lstat(filepath.Join(dest, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", name, info.Mode(), mode)
		}
	}
	// Directories get their mtimes after their contents are written.
	for _, name := range []string{"app", "app/ro"} {
		if info, _ := os.Stat(filepath.Join(dest, name)); !info.ModTime().Equal(old) {
			t.Errorf("%s: mtime %v, want %v", name, info.ModTime(), old)
		}
	}
}

// TestRestoreDamaged restores an archive with one damaged entry: it is not written (not even
// as a temp file), and the others are.
func TestRestoreDamaged(t *testing.T) {
	for _, withManifest := range []bool{true, false} {
		t.Run(map[bool]string{true: "manifest", false: "foreign"}[withManifest], func(t *testing.T) {
			dest := t.TempDir()
			data := flipByteIn(t, buildZip(t, sampleTree, withManifest), "app/sub/stored")
			_, res := restoreInto(t, data, dest, Options{})
			if got := problemStrings(res.Damaged); len(got) != 1 || got[0] != "app/sub/stored: crc-32 mismatch" {
				t.Errorf("damaged %q, want app/sub/stored", got)
			}
			got := listTree(t, dest)
			want := []string{"app/", "app/a.txt", "app/empty/", "app/sub/", "app/sub/b.bin", "app/zero"}
			if !slices.Equal(got, want) {
				t.Errorf("restored %q, want %q", got, want)
			}
		})
	}
}

func TestRestoreMissingFromArchive(t *testing.T) {
	data := withManifest(t, sampleTree, func(m *format.Manifest) {
		m.Files = append(m.Files, format.File{Path: "app/gone", Size: 1, SHA256: digest(goodSum)})
	})
	_, res := restoreInto(t, data, t.TempDir(), Options{})
	if got := problemStrings(res.Damaged); !slices.Equal(got, []string{"app/gone: in the manifest but missing from the archive"}) {
		t.Errorf("damaged %q", got)
	}
	if res.Files != 4 {
		t.Errorf("%d files restored, want the 4 present", res.Files)
	}
}

func TestRestoreInclude(t *testing.T) {
	tests := []struct {
		name  string
		match func(name string, isDir bool) bool
		want  []string
	}{
		{"a folder", func(n string, d bool) bool { return n == "app/sub" && d },
			[]string{"app/", "app/sub/", "app/sub/b.bin", "app/sub/stored"}},
		{"one file", func(n string, d bool) bool { return n == "app/a.txt" }, []string{"app/", "app/a.txt"}},
		{"an empty folder", func(n string, d bool) bool { return strings.HasSuffix(n, "empty") }, []string{"app/", "app/empty/"}},
		{"nothing", func(string, bool) bool { return false }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := t.TempDir()
			restoreInto(t, buildZip(t, sampleTree, true), dest, Options{Include: tt.match})
			if got := listTree(t, dest); !slices.Equal(got, tt.want) {
				t.Errorf("restored %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRestoreSpecialEntries(t *testing.T) {
	dest := t.TempDir()
	entries := []zent{{name: "app/a", body: "a"}, {name: "app/link", body: "/etc/passwd", symlink: true}}
	plan, res := restoreInto(t, buildZip(t, entries, false), dest, Options{})
	if len(plan.Skipped) != 1 || plan.Skipped[0] != (format.Skipped{Path: "app/link", Kind: "symlink"}) {
		t.Errorf("skipped %+v, want app/link", plan.Skipped)
	}
	if got := listTree(t, dest); !slices.Equal(got, []string{"app/", "app/a"}) || res.Files != 1 {
		t.Errorf("restored %q, want app/a only", got)
	}
}

// TestRestoreInterrupted stops a restore in the middle of a file's data: Run returns the
// context's error, and neither the file nor its temp file is left.
func TestRestoreInterrupted(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: eight writes of the buffer
	dest := t.TempDir()
	r := openZip(t, buildZip(t, []zent{{name: "a/small", body: "s"}, {name: "a/big", body: big}}, true))
	// One job: the test counts the checks of ctx, which more workers would share out.
	plan, err := NewPlan(t.Context(), r, dest, Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &countdownCtx{Context: t.Context()}
	ctx.left.Store(5)
	res, err := plan.Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if got := listTree(t, dest); !slices.Equal(got, []string{"a/", "a/small"}) || res.Files != 1 {
		t.Errorf("left %q (%d files), want a/small only", got, res.Files)
	}
}

// countdownCtx reports itself canceled once Err has been asked left times.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestRestoreWithoutUnnamedFiles: where the file system makes no unnamed files, new files
// are written through temp names, recorded in the journal, as before; the restore is the
// same.
func TestRestoreWithoutUnnamedFiles(t *testing.T) {
	tried := 0
	defer func(open func(int, uint32) (int, error)) { openUnnamed = open }(openUnnamed)
	openUnnamed = func(int, uint32) (int, error) {
		tried++
		return -1, unix.EOPNOTSUPP
	}
	restoreSampleWhole(t)
	if tried != 1 {
		t.Errorf("an unnamed file was tried %d times, want once", tried)
	}
}

// TestRestoreLinksThroughProc: where the kernel refuses to link a descriptor itself (before
// 6.10, without CAP_DAC_READ_SEARCH: ENOENT), new files are linked through /proc/self/fd,
// and the restore is the same.
func TestRestoreLinksThroughProc(t *testing.T) {
	refused := 0
	defer func(link func(int, fileID, int, string) error) { linkDescriptor = link }(linkDescriptor)
	linkDescriptor = func(int, fileID, int, string) error {
		refused++
		return unix.ENOENT
	}
	restoreSampleWhole(t)
	if refused != 1 {
		t.Errorf("the descriptor was linked %d times, want once (then through /proc)", refused)
	}
}

// restoreSampleWhole restores sampleTree with one worker and fails unless every entry is
// in place with its content.
func restoreSampleWhole(t *testing.T) {
	t.Helper()
	dest := t.TempDir()
	plan, res := restoreInto(t, buildZip(t, sampleTree, true), dest, Options{Jobs: 1})
	if res == nil || len(res.Damaged)+len(res.Failed) > 0 || res.Files != 4 {
		t.Fatalf("refused %q, result %+v", problemStrings(plan.Refused), res)
	}
	want := []string{"app/", "app/a.txt", "app/empty/", "app/sub/", "app/sub/b.bin", "app/sub/stored", "app/zero"}
	if got := listTree(t, dest); !slices.Equal(got, want) {
		t.Errorf("restored %q, want %q", got, want)
	}
	for _, e := range sampleTree {
		if got, err := os.ReadFile(filepath.Join(dest, e.name)); err == nil && string(got) != e.body {
			t.Errorf("%s: content differs", e.name)
		}
	}
}
