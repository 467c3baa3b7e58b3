package archive

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// restoreInto plans and, when the plan allows, runs a restore of data into dest.
func restoreInto(t *testing.T, data []byte, dest string, opts RestoreOptions) (*RestorePlan, *RestoreResult) {
	t.Helper()
	r := openZip(t, data)
	plan, err := r.PlanRestore(dest, opts)
	if err != nil {
		t.Fatalf("PlanRestore: %v", err)
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
	plan, res := restoreInto(t, buildZip(t, sampleTree, true), dest, RestoreOptions{})
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
	_, res := restoreInto(t, buildZip(t, entries, true), dest, RestoreOptions{})
	if len(res.Failed)+len(res.Damaged) > 0 {
		t.Fatalf("failed %q damaged %q", problemStrings(res.Failed), problemStrings(res.Damaged))
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dest, "app/ro"), 0o700) })
	want := map[string]fs.FileMode{
		"app": fs.ModeDir | 0o750, "app/ro": fs.ModeDir | 0o500, "app/ro/inside": 0o400,
		"app/setuid": 0o755, "app/sticky": fs.ModeDir | 0o777, "app/private": 0o600,
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

// TestRestoreRefused restores hostile archives: the restore is refused before anything is
// written, inside or outside the destination.
func TestRestoreRefused(t *testing.T) {
	tests := []struct {
		name    string
		entries []zent
		want    string
	}{
		{"dot-dot", []zent{{name: "ok", body: "x"}, {name: "../x", body: "evil"}}, `../x: unsafe name: ".." component`},
		{"dot-dot inside", []zent{{name: "a/../../x", body: "evil"}}, `a/../../x: unsafe name: ".." component`},
		{"absolute", []zent{{name: "/tmp/x", body: "evil"}}, "/tmp/x: unsafe name: absolute"},
		{"backslash", []zent{{name: `..\x`, body: "evil"}}, `..\x: unsafe name: contains a backslash`},
		{"drive letter", []zent{{name: "C:/x", body: "evil"}}, "C:/x: unsafe name: starts with a drive letter"},
		{"symlink then file through it", []zent{{name: "l", body: "..", symlink: true}, {name: "l/x", body: "evil"}},
			"l/x: unsafe name: below l, a symlink entry"},
		{"duplicate", []zent{{name: "a", body: "1"}, {name: "a", body: "2"}}, "a: duplicate name"},
		{"file and dir", []zent{{name: "a", body: "1"}, {name: "a/"}}, "a/: duplicate name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "d1", "dest")
			plan, res := restoreInto(t, buildZip(t, tt.entries, false), dest, RestoreOptions{Force: true})
			if res != nil {
				t.Fatal("restore ran, want it refused")
			}
			if got := problemStrings(plan.Refused); !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tt.want) }) {
				t.Errorf("refused %q, want %q", got, tt.want)
			}
			if got := listTree(t, parent); len(got) != 0 {
				t.Errorf("written: %q, want nothing", got)
			}
		})
	}
}

// TestRestoreThroughDestSymlink restores into a destination where a folder the archive holds
// is a symlink to elsewhere: refused, and nothing lands where the link points.
func TestRestoreThroughDestSymlink(t *testing.T) {
	for _, link := range []string{"app", "app/sub"} {
		t.Run(link, func(t *testing.T) {
			dest, outside := t.TempDir(), t.TempDir()
			os.MkdirAll(filepath.Join(dest, filepath.Dir(link)), 0o755)
			if err := os.Symlink(outside, filepath.Join(dest, link)); err != nil {
				t.Fatal(err)
			}
			plan, res := restoreInto(t, buildZip(t, sampleTree, true), dest, RestoreOptions{Force: true})
			if res != nil {
				t.Fatal("restore ran, want it refused")
			}
			want := "a symlink in the destination"
			if got := problemStrings(plan.Refused); len(got) == 0 || !strings.Contains(got[0], want) {
				t.Errorf("refused %q, want %q", got, want)
			}
			if got := listTree(t, outside); len(got) != 0 {
				t.Errorf("written through the link: %q", got)
			}
		})
	}
}

// TestRestoreSymlinkSwappedIn swaps a folder for a symlink after the plan was made: the file
// below it fails, and nothing is written where the link points.
func TestRestoreSymlinkSwappedIn(t *testing.T) {
	dest, outside := t.TempDir(), t.TempDir()
	r := openZip(t, buildZip(t, []zent{{name: "a/b/c", body: "x"}}, true))
	plan, err := r.PlanRestore(dest, RestoreOptions{})
	if err != nil || !plan.OK() {
		t.Fatalf("plan: %v %q", err, problemStrings(plan.Refused))
	}
	os.Mkdir(filepath.Join(dest, "a"), 0o755)
	os.Symlink(outside, filepath.Join(dest, "a/b"))
	res, err := plan.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := problemStrings(res.Failed); len(got) != 1 || !strings.Contains(got[0], "a/b is a symlink or not a directory") {
		t.Errorf("failed %q, want a/b/c failed through the symlink", got)
	}
	if got := listTree(t, outside); len(got) != 0 {
		t.Errorf("written through the link: %q", got)
	}
}

func TestRestoreConflicts(t *testing.T) {
	entries := []zent{{name: "app/a.txt", body: "new"}, {name: "app/b.txt", body: "bee"}}
	data := buildZip(t, entries, true)
	setup := func(t *testing.T) (dest, outside string) {
		dest, outside = t.TempDir(), filepath.Join(t.TempDir(), "outside")
		os.Mkdir(filepath.Join(dest, "app"), 0o755)
		os.WriteFile(outside, []byte("outside"), 0o644)
		// A hard link to a file outside: replacing it must not write through it.
		if err := os.Link(outside, filepath.Join(dest, "app/a.txt")); err != nil {
			t.Fatal(err)
		}
		return dest, outside
	}
	t.Run("without force", func(t *testing.T) {
		dest, _ := setup(t)
		plan, res := restoreInto(t, data, dest, RestoreOptions{})
		if res != nil || !slices.Equal(plan.Conflicts, []string{"app/a.txt"}) {
			t.Fatalf("conflicts %q (ran %v), want app/a.txt and a refusal", plan.Conflicts, res != nil)
		}
		if _, err := os.Lstat(filepath.Join(dest, "app/b.txt")); err == nil {
			t.Error("app/b.txt written by a refused restore")
		}
	})
	t.Run("with force", func(t *testing.T) {
		dest, outside := setup(t)
		_, res := restoreInto(t, data, dest, RestoreOptions{Force: true})
		if res == nil || res.Files != 2 {
			t.Fatalf("result %+v, want 2 files", res)
		}
		if got, _ := os.ReadFile(filepath.Join(dest, "app/a.txt")); string(got) != "new" {
			t.Errorf("app/a.txt = %q, want new", got)
		}
		if got, _ := os.ReadFile(outside); string(got) != "outside" {
			t.Errorf("the hard-linked file outside changed to %q", got)
		}
	})
	t.Run("type clashes refuse even with force", func(t *testing.T) {
		dest := t.TempDir()
		os.MkdirAll(filepath.Join(dest, "app/a.txt"), 0o755)
		os.WriteFile(filepath.Join(dest, "app/sub"), nil, 0o644)
		clash := buildZip(t, []zent{{name: "app/a.txt", body: "x"}, {name: "app/sub/"}, {name: "app/sub/f", body: "y"}}, true)
		plan, res := restoreInto(t, clash, dest, RestoreOptions{Force: true})
		want := []string{"app/a.txt: exists in the destination as a directory",
			"app/sub/: exists in the destination and is not a directory",
			"app/sub/f: would pass through app/sub, which is not a directory in the destination"}
		if res != nil || !slices.Equal(problemStrings(plan.Refused), want) {
			t.Errorf("refused %q, want %q", problemStrings(plan.Refused), want)
		}
	})
}

// TestRestoreDamaged restores an archive with one damaged entry: it is not written (not even
// as a temp file), and the others are.
func TestRestoreDamaged(t *testing.T) {
	for _, withManifest := range []bool{true, false} {
		t.Run(map[bool]string{true: "manifest", false: "foreign"}[withManifest], func(t *testing.T) {
			dest := t.TempDir()
			data := flipByteIn(t, buildZip(t, sampleTree, withManifest), "app/sub/stored")
			_, res := restoreInto(t, data, dest, RestoreOptions{})
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
	data := withManifest(t, sampleTree, func(m *Manifest) {
		m.Files = append(m.Files, File{Path: "app/gone", Size: 1, SHA256: goodSum})
	})
	_, res := restoreInto(t, data, t.TempDir(), RestoreOptions{})
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
			restoreInto(t, buildZip(t, sampleTree, true), dest, RestoreOptions{Include: tt.match})
			if got := listTree(t, dest); !slices.Equal(got, tt.want) {
				t.Errorf("restored %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRestoreSpecialEntries(t *testing.T) {
	dest := t.TempDir()
	entries := []zent{{name: "app/a", body: "a"}, {name: "app/link", body: "/etc/passwd", symlink: true}}
	plan, res := restoreInto(t, buildZip(t, entries, false), dest, RestoreOptions{})
	if len(plan.Skipped) != 1 || plan.Skipped[0] != (Skipped{Path: "app/link", Kind: "symlink"}) {
		t.Errorf("skipped %+v, want app/link", plan.Skipped)
	}
	if got := listTree(t, dest); !slices.Equal(got, []string{"app/", "app/a"}) || res.Files != 1 {
		t.Errorf("restored %q, want app/a only", got)
	}
}
