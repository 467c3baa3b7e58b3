package archive

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backup/format"
	"backup/walker"
)

// TestWriterNameOrder adds entries as a caller might get them wrong: the writer refuses
// every name that would make two entries of one name (or one the manifest's), and any name
// out of walk order, and stores what it accepted.
func TestWriterNameOrder(t *testing.T) {
	tests := []struct {
		name    string
		entries []string // a trailing "/" adds a directory
		refused string   // the entry refused, "" when all are accepted
	}{
		{"walk order", []string{"a/", "a/x/", "a/x/y", "a!b", "a.txt", "b/", "b/c"}, ""},
		{"sources in any order", []string{"z/", "z/1", "a/", "a/1", "m"}, ""},
		{"odd bytes", []string{"s/", `s/a\b`, "s/c:d", "s/\xff"}, ""},
		{"same file twice", []string{"a/", "a/x", "a/x"}, "a/x"},
		{"file and directory of one name", []string{"a/", "a/x", "a/x/"}, "a/x"},
		{"out of order", []string{"a/", "a/y", "a/x"}, "a/x"},
		{"a source again", []string{"a/", "a/x", "b", "a/y"}, "a/y"},
		{"a source twice", []string{"a", "b", "a"}, "a"},
		{"manifest's name", []string{"a", format.ManifestName}, format.ManifestName},
		{"below the manifest's name", []string{format.ManifestName + "/"}, format.ManifestName},
		{"unsafe", []string{"a/", "a/../x"}, "a/../x"},
	}
	info := fileInfo(t, time.Now(), 0o644)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Create(t.Context(), t.TempDir(), "t.zip", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			refused := ""
			for _, e := range tt.entries {
				name, isDir := strings.CutSuffix(e, "/")
				if isDir {
					err = w.AddDir(name, info, nil)
				} else {
					err = w.AddFile(heldFile1(t), name, info, nil)
				}
				if err != nil {
					refused = name
					break
				}
			}
			if refused != tt.refused {
				t.Errorf("refused %q, want %q", refused, tt.refused)
			}
		})
	}
}

func TestCompareNames(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "a", 0},
		{"a", "a/x", -1},
		{"a/x", "a!b", -1},
		{"a/x", "a.txt", -1},
		{"a.txt", "a/x", 1},
		{"a/z", "ab", -1},
		{"a/\xff", "a/b", 1},
	}
	for _, tt := range tests {
		if got := compareNames(tt.a, tt.b); got != tt.want {
			t.Errorf("compareNames(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestWriterNameTooLong adds a file and a folder whose names no zip entry can hold: each is
// a warning (OpStore), neither is stored, and the archive is whole.
func TestWriterNameTooLong(t *testing.T) {
	long := "a/" + strings.Repeat("x", maxNameLen)
	var warns []string
	w, err := Create(t.Context(), t.TempDir(), "t.zip", Options{OnWarn: func(err error) {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Op == format.OpStore && errors.Is(err, errNameTooLong) {
			warns = append(warns, pe.Path)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	info := fileInfo(t, time.Now(), 0o644)
	dirName := "a/" + strings.Repeat("d", maxNameLen-2) // fits, but not with its slash
	for _, err := range []error{w.AddDir("a", info, nil), w.AddDir(dirName, info, nil), w.AddFile(heldFile1(t), long, info, nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CloseManifest(&format.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 || warns[0] != dirName || warns[1] != long {
		t.Errorf("warnings for %d names, want the folder's and the file's", len(warns))
	}
}

// heldFile1 is a Handle on a small file of its own, for tests about what the Writer does
// with names: its content does not matter.
func heldFile1(t *testing.T) walker.Handle {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	return heldFiles(t, dir)["f"].src
}
