package archive

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"backup/skiprules"
)

func TestCheckName(t *testing.T) {
	const dos, ntfs, vfat, unknown = Host(0), Host(10), Host(14), Host(30)
	tests := []struct {
		name string
		host Host
		want error
	}{
		{"app/a.txt", dos, nil},
		{"app", HostUnix, nil},
		{"naïve café/ü.txt", dos, nil},
		{"bad\xffname/x", HostUnix, nil}, // not UTF-8: still a name Linux allows
		{"with space/..hidden", dos, nil},
		{"a/...", dos, nil},
		{"a/b:c", dos, nil},
		{"", HostUnix, errEmptyName},
		{"a\x00b", HostUnix, errNUL},
		{`a\b`, dos, errBackslash},
		{`a\b`, ntfs, errBackslash},
		{`a\b`, vfat, errBackslash},
		{`a\b`, unknown, errBackslash},
		{`..\x`, dos, errBackslash},
		{`a\b`, HostUnix, nil}, // a file named a\b, as Linux allows
		{`..\x`, HostDarwin, nil},
		{`\\server\share`, HostUnix, nil},
		{"/etc/passwd", HostUnix, errAbsolute},
		{"//server/share", dos, errAbsolute},
		{"C:/Windows", dos, errDriveLetter},
		{"c:x", ntfs, errDriveLetter},
		{"c:x", HostUnix, nil}, // a file named c:x
		{"C:/Windows", HostUnix, nil},
		{".backup-restore-1gt0jjfpyjt7g.journal", HostUnix, errJournalName},
		{"app/.backup-restore-1gt0jjfpyjt7g.journal", HostUnix, nil}, // not where a journal is looked for
		{".backup-restore-x.y.journal", HostUnix, nil},
		{".backup-restore-.journal", HostUnix, nil},
		{"abc.journal", HostUnix, nil},
		{".backup-restore-abc", HostUnix, nil},
		{"a//b", HostUnix, errEmptyPart},
		{"a/", HostUnix, errEmptyPart}, // a directory's slash is removed before: one more is empty
		{"./a", HostUnix, errDotPart},
		{"a/./b", dos, errDotPart},
		{"..", HostUnix, errDotDotPart},
		{"../x", HostUnix, errDotDotPart},
		{"a/../../x", HostDarwin, errDotDotPart},
		{"a/..", dos, errDotDotPart},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s host %d", tt.name, tt.host), func(t *testing.T) {
			if got := CheckName(tt.name, tt.host); !errors.Is(got, tt.want) {
				t.Errorf("CheckName(%q, %d) = %v, want %v", tt.name, tt.host, got, tt.want)
			}
		})
	}
}

func TestCheckNames(t *testing.T) {
	file := func(name string) *Entry { return &Entry{Name: name} }
	dir := func(name string) *Entry { return &Entry{Name: name, IsDir: true} }
	link := func(name string) *Entry { return &Entry{Name: name, Kind: skiprules.KindSymlink} }
	unixFile := func(name string) *Entry { return &Entry{Name: name, Host: HostUnix} }
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
		{"backslash from Unix", []*Entry{unixFile(`a\b`), unixFile("a"), unixFile(`c\d/e`)}, nil},
		{"backslash from DOS", []*Entry{unixFile("a"), file(`a\b`)}, []string{`a\b: ` + errBackslash.Error()}},
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

// TestProblemString: a problem is always one line, its entry quoted as QuoteName does.
func TestProblemString(t *testing.T) {
	p := Problem{Entry: "a\nb", Reason: "below \x1b[2J\nforged"}
	if got, want := p.String(), `"a\nb": below \x1b[2J\nforged`; got != want {
		t.Errorf("Problem.String() = %s, want %s", got, want)
	}
}
