package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRestoreRoundTrip backs up a tree and restores it: the same paths, contents, modes
// (less setuid, setgid and a file's sticky bit) and mtimes, directories' included.
func TestRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{
		"a.txt":            {content: "alpha\n"},
		"exec.sh":          {content: "#!/bin/sh\n", mode: 0o755},
		"secret":           {content: "s", mode: 0o600},
		"suid":             {content: "u", mode: 0o755 | os.ModeSetuid | os.ModeSetgid},
		"naïve café/ü.txt": {content: "utf-8\n"},
		"empty":            {kind: "dir"},
		"sticky":           {kind: "dir", mode: 0o777 | os.ModeSticky},
		"ro":               {kind: "dir", mode: 0o555},
		"ro/f":             {content: "in a read-only dir", mode: 0o444},
		"big.bin":          {content: randomString(t, 9<<20)}, // spills to a spool on create
		"zero":             {content: ""},
		"old/1975":         {content: "before 1980"},
		"old/1960":         {content: "before 1970"},
	})
	if err := os.Link(filepath.Join(src, "a.txt"), filepath.Join(src, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	setTimes(t, src, map[string]time.Time{
		"old/1975": time.Date(1975, 6, 1, 12, 0, 1, 0, time.UTC),
		"old/1960": time.Date(1960, 2, 29, 23, 59, 59, 0, time.UTC),
		"old":      time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		"empty":    time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC),
	})
	arch := filepath.Join(dir, "a.zip")
	if r := backup(t, runOpts{dir: dir}, "create", "-o", arch, "app"); r.code != exitComplete {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	dest := filepath.Join(dir, "restored", "here")
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	if r.code != exitComplete {
		t.Fatalf("restore: exit %d\n%s", r.code, r.stderr)
	}
	wantLine := "backup restore: complete: 11 files, 6 dirs, 9.0 MiB restored to " + dest + " (status recorded at backup: complete)\n"
	if r.stderr != wantLine {
		t.Errorf("stderr %q, want %q", r.stderr, wantLine)
	}
	compareTrees(t, src, filepath.Join(dest, "app"))
	t.Cleanup(func() { makeWritable(dest) })
}

// setTimes sets mtimes below root; directories are set deepest first and last, since
// setting a file's time does not touch its folder but creating it did.
func setTimes(t *testing.T, root string, times map[string]time.Time) {
	t.Helper()
	names := keys(times)
	slices.Reverse(names)
	for _, name := range names {
		if err := os.Chtimes(filepath.Join(root, name), times[name], times[name]); err != nil {
			t.Fatal(err)
		}
	}
}

// compareTrees checks that got holds what want holds: the same paths and types, contents,
// permission bits without setuid, setgid and a file's sticky bit (a folder keeps its own),
// and mtimes to the nanosecond (the manifest holds what the zip's whole seconds cannot).
func compareTrees(t *testing.T, want, got string) {
	t.Helper()
	wantPaths, gotPaths := listTree(t, want), listTree(t, got)
	if !slices.Equal(wantPaths, gotPaths) {
		t.Fatalf("restored paths %q, want %q", gotPaths, wantPaths)
	}
	for _, rel := range append(wantPaths, "") {
		rel = strings.TrimSuffix(rel, "@") // listTree's mark of a symlink
		w, g := lstat(t, filepath.Join(want, rel)), lstat(t, filepath.Join(got, rel))
		wantMode := w.Mode() &^ (fs.ModeSetuid | fs.ModeSetgid)
		if !w.IsDir() {
			wantMode &^= fs.ModeSticky
		}
		if g.Mode() != wantMode {
			t.Errorf("%s: mode %v, want %v", rel, g.Mode(), wantMode)
		}
		if !g.ModTime().Equal(w.ModTime()) {
			t.Errorf("%s: mtime %v, want %v", rel, g.ModTime(), w.ModTime())
		}
		if w.Mode().IsRegular() && sha256.Sum256(readFile(t, filepath.Join(got, rel))) != sha256.Sum256(readFile(t, filepath.Join(want, rel))) {
			t.Errorf("%s: content differs", rel)
		}
	}
}

func lstat(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// listTree returns every path below root, slash-separated, with "/" after directories and
// "@" after symlinks; nothing when root does not exist.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && os.IsNotExist(err) {
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

func TestRestoreConflictsAndForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	if r := backup(t, runOpts{dir: dir}, "restore", "-q", arch, dest); r.code != exitComplete || r.stdout+r.stderr != "" {
		t.Fatalf("first restore -q: exit %d output %q", r.code, r.stdout+r.stderr)
	}
	os.WriteFile(filepath.Join(dest, "app/a.txt"), []byte("changed"), 0o644)
	r := backup(t, runOpts{dir: dir}, "restore", arch, dest)
	// app/sub/b.txt holds what the archive does: already present, not a conflict.
	want := "app/a.txt: exists in the destination (use --force to replace it)\n" +
		"backup restore: refused, nothing written: 1 file exists\n"
	if r.code != exitFailed || r.stderr != want {
		t.Errorf("second restore: exit %d stderr %q, want 1 and %q", r.code, r.stderr, want)
	}
	assertContent(t, filepath.Join(dest, "app/a.txt"), "changed")
	if r := backup(t, runOpts{dir: dir}, "restore", "--force", arch, dest); r.code != exitComplete {
		t.Errorf("--force: exit %d %s", r.code, r.stderr)
	}
	assertContent(t, filepath.Join(dest, "app/a.txt"), "alpha\n")
}

func TestRestoreInclude(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	tests := []struct {
		patterns []string
		want     []string
	}{
		{[]string{"app/sub/"}, []string{"app/", "app/sub/", "app/sub/b.txt"}},
		{[]string{"*.txt", "!b.txt"}, []string{"app/", "app/a.txt"}},
		{[]string{"empty"}, []string{"app/", "app/empty/"}},
	}
	for _, tt := range tests {
		t.Run(tt.patterns[0], func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "dest")
			args := []string{"restore", "-q", arch, dest}
			for _, p := range tt.patterns {
				args = append(args, "--include", p)
			}
			if r := backup(t, runOpts{dir: dir}, args...); r.code != exitComplete {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := listTree(t, dest); !slices.Equal(got, tt.want) {
				t.Errorf("restored %q, want %q", got, tt.want)
			}
		})
	}
	r := backup(t, runOpts{dir: dir}, "restore", "--include", "nothing-like-this", arch, filepath.Join(dir, "none"))
	if want := `backup restore: no entry matches --include "nothing-like-this" (patterns match the names the archive stores, as backup list prints them: "app/")` + "\n"; r.code != exitFailed || r.stderr != want {
		t.Errorf("no match: exit %d stderr %q", r.code, r.stderr)
	}
	if r := backup(t, runOpts{dir: dir}, "restore", "--include", "[z-", arch, "x"); r.code != exitUsage {
		t.Errorf("bad pattern: exit %d, want %d", r.code, exitUsage)
	}
}

func TestRestoreUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"restore"}, {"restore", "a.zip"}, {"restore", "a", "b", "c"}, {"restore", "--nope", "a", "b"}} {
		if r := backup(t, runOpts{}, args...); r.code != exitUsage || bytes.Count([]byte(r.stderr), []byte("\n")) != 2 {
			t.Errorf("%q: exit %d stderr %q, want %d and a line with a hint", args, r.code, r.stderr, exitUsage)
		}
	}
}

func TestRestoreJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	os.WriteFile(filepath.Join(dir, "junk.zip"), []byte("junk"), 0o644)
	dest := filepath.Join(dir, "dest")
	tests := []struct {
		name, archive string
		code          int
		status        string
		files         int
		present       int
		conflicts     int
		err           string
		change        func()
	}{
		{"restored", arch, exitComplete, "complete", 2, 0, 0, "", nil},
		{"again", arch, exitComplete, "complete", 0, 2, 0, "", nil},
		{"conflicts", arch, exitFailed, "refused", 0, 0, 2, "", func() {
			os.WriteFile(filepath.Join(dest, "app/a.txt"), []byte("changed"), 0o644)
			os.WriteFile(filepath.Join(dest, "app/sub/b.txt"), []byte("changed"), 0o644)
		}},
		{"unreadable", filepath.Join(dir, "junk.zip"), exitFailed, "failed", 0, 0, 0, "not a zip archive, or its central directory is damaged", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change != nil {
				tt.change()
			}
			r := backup(t, runOpts{dir: dir}, "restore", "--json", tt.archive, dest)
			var got restoreJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("stdout %q: %v", r.stdout, err)
			}
			if r.code != tt.code || string(got.Status) != tt.status || got.Files != tt.files || got.AlreadyPresent != tt.present || len(got.Conflicts) != tt.conflicts ||
				got.Error != tt.err || got.Refused == nil || got.Failed == nil {
				t.Errorf("exit %d, %+v; want %d %q %d files %d present %d conflicts error %q", r.code, got, tt.code, tt.status, tt.files, tt.present, tt.conflicts, tt.err)
			}
		})
	}
}
