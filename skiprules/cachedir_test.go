package skiprules

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"backup/walker"
)

const validTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag.\n"

func TestIsCacheDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  bool
	}{
		{"valid tag", writeTag(validTag), true},
		{"signature alone", writeTag(cacheDirSignature), true},
		{"signature then anything", writeTag(cacheDirSignature + "garbage"), true},
		{"bad signature", writeTag("Signature: 0000000000000000000000000000000\n"), false},
		{"signature not at start", writeTag("\n" + validTag), false},
		{"signature cut short", writeTag(cacheDirSignature[:20]), false},
		{"signature wrong case", writeTag("signature: 8a477f597d28d172789f06886806bc55"), false},
		{"empty tag", writeTag(""), false},
		{"missing tag", func(*testing.T, string) {}, false},
		{"tag is a directory", func(t *testing.T, dir string) {
			t.Helper()
			if err := os.Mkdir(filepath.Join(dir, CacheDirTagName), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if got := isCacheDir(t, dir); got != tt.want {
				t.Errorf("IsCacheDir = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsCacheDirNil(t *testing.T) {
	if IsCacheDir(nil) {
		t.Error("IsCacheDir(nil) = true, want false")
	}
}

// TestIsCacheDirSwapped: the tag is read in the directory the walk opened, even when its
// path has since been swapped for a symlink to a tagged directory.
func TestIsCacheDirSwapped(t *testing.T) {
	top := t.TempDir()
	dir, cache := filepath.Join(top, "dir"), filepath.Join(top, "cache")
	for _, d := range []string{dir, cache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTag(validTag)(t, cache)
	var got bool
	atEntry(t, top, "dir", func(e walker.Entry) {
		if _, err := e.OpenFile("nothing"); !os.IsNotExist(err) { // opens dir
			t.Errorf("OpenFile: %v, want not found", err)
		}
		if err := os.Rename(dir, dir+".orig"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(cache, dir); err != nil {
			t.Fatal(err)
		}
		got = IsCacheDir(e)
	})
	if got {
		t.Error("IsCacheDir read the tag through the symlink swapped in")
	}
}

// isCacheDir asks IsCacheDir about the directory at path, as a backup does: on the walker's
// Entry for it.
func isCacheDir(t *testing.T, path string) bool {
	t.Helper()
	var got bool
	atEntry(t, path, "", func(e walker.Entry) { got = IsCacheDir(e) })
	return got
}

// atEntry walks root and calls fn during the walk's Visit of the entry at rel ("" for root).
func atEntry(t *testing.T, root, rel string, fn func(walker.Entry)) {
	t.Helper()
	found := false
	w := walker.Walker{Visit: func(e walker.Entry) error {
		if e.Rel == rel {
			found = true
			fn(e)
		}
		return nil
	}}
	if err := w.Walk(context.Background(), root, "r"); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("the walk of %s met no %q", root, rel)
	}
}

// writeTag returns a setup that writes content as dir's CACHEDIR.TAG.
func writeTag(content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, CacheDirTagName), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
