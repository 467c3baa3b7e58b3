package archive

import (
	"errors"
	"slices"
	"testing"

	"backup/skiprules"
)

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		want error
	}{
		{"app/a.txt", nil},
		{"app", nil},
		{"naïve café/ü.txt", nil},
		{"with space/..hidden", nil},
		{"a/...", nil},
		{"a/b:c", nil},
		{"", errEmptyName},
		{"a\x00b", errNUL},
		{`a\b`, errBackslash},
		{`..\x`, errBackslash},
		{"/etc/passwd", errAbsolute},
		{"//server/share", errAbsolute},
		{"C:/Windows", errDriveLetter},
		{"c:x", errDriveLetter},
		{"a//b", errEmptyPart},
		{"a/", errEmptyPart}, // a directory's slash is removed before: one more is empty
		{"./a", errDotPart},
		{"a/./b", errDotPart},
		{"..", errDotDotPart},
		{"../x", errDotDotPart},
		{"a/../../x", errDotDotPart},
		{"a/..", errDotDotPart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckName(tt.name); !errors.Is(got, tt.want) {
				t.Errorf("CheckName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestCheckNames(t *testing.T) {
	file := func(name string) *Entry { return &Entry{Name: name} }
	dir := func(name string) *Entry { return &Entry{Name: name, IsDir: true} }
	link := func(name string) *Entry { return &Entry{Name: name, Kind: skiprules.KindSymlink} }
	tests := []struct {
		name    string
		entries []*Entry
		want    []string
	}{
		{"plain tree", []*Entry{dir("a"), file("a/b"), dir("a/c"), file("a/c/d")}, nil},
		{"parents missing are fine", []*Entry{file("a/b/c")}, nil},
		{"duplicate file", []*Entry{file("a"), file("a")}, []string{"a: duplicate name"}},
		{"file and directory of one name", []*Entry{file("a"), dir("a")}, []string{"a/: duplicate name"}},
		{"symlink then a file through it", []*Entry{link("a/l"), file("a/l/passwd")},
			[]string{"a/l/passwd: unsafe name: below a/l, a symlink entry"}},
		{"file through a symlink stored after it", []*Entry{file("l/x"), link("l")},
			[]string{"l/x: unsafe name: below l, a symlink entry"}},
		{"below a file", []*Entry{file("a"), file("a/b/c")}, []string{"a/b/c: unsafe name: below a, a file entry"}},
		{"unsafe and duplicate", []*Entry{file("../x"), file("b"), file("b")},
			[]string{`../x: unsafe name: ".." component`, "b: duplicate name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemStrings(CheckNames(tt.entries))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
