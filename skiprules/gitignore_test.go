package skiprules

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// matchCase is one Match call against a set of patterns.
type matchCase struct {
	name     string
	patterns []string
	rel      string
	isDir    bool
	wantPat  string
	wantExcl bool
}

func runMatchCases(t *testing.T, tests []matchCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParsePatterns(tt.patterns)
			if err != nil {
				t.Fatalf("ParsePatterns(%q): %v", tt.patterns, err)
			}
			pat, excl := m.Match(tt.rel, tt.isDir)
			if pat != tt.wantPat || excl != tt.wantExcl {
				t.Errorf("patterns %q: Match(%q, dir=%v) = (%q, %v), want (%q, %v)",
					tt.patterns, tt.rel, tt.isDir, pat, excl, tt.wantPat, tt.wantExcl)
			}
		})
	}
}

func TestMatchAnchoring(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"base name at top", []string{"foo"}, "foo", false, "foo", true},
		{"base name at depth", []string{"foo"}, "a/b/foo", false, "foo", true},
		{"base name is whole segment", []string{"foo"}, "a/foobar", false, "", false},
		{"base name not a parent", []string{"foo"}, "foo/bar", false, "", false},
		{"leading slash anchors", []string{"/foo"}, "foo", false, "/foo", true},
		{"leading slash not at depth", []string{"/foo"}, "a/foo", false, "", false},
		{"middle slash anchors", []string{"a/foo"}, "a/foo", false, "a/foo", true},
		{"middle slash not at depth", []string{"a/foo"}, "x/a/foo", false, "", false},
		{"trailing slash does not anchor", []string{"foo/"}, "a/foo", true, "foo/", true},
		{"star does not cross slash", []string{"a/*"}, "a/b/c", false, "", false},
		{"star one level", []string{"a/*"}, "a/b", false, "a/*", true},
		{"star base name at depth", []string{"*.log"}, "x/y/z.log", false, "*.log", true},
		{"star matches empty", []string{"*.log"}, ".log", false, "*.log", true},
		{"anchored star", []string{"*/foo"}, "a/foo", false, "*/foo", true},
		{"anchored star not deeper", []string{"*/foo"}, "a/b/foo", false, "", false},
		{"question mark", []string{"a?c"}, "abc", false, "a?c", true},
		{"question mark needs one", []string{"a?c"}, "ac", false, "", false},
		{"question mark not slash", []string{"a?c"}, "a/c", false, "", false},
		{"question mark one character", []string{"?.txt"}, "é.txt", false, "?.txt", true},
		{"case sensitive", []string{"foo"}, "FOO", false, "", false},
		{"parent dir not considered", []string{"a/"}, "a/b", false, "", false},
	})
}

func TestMatchDirOnly(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"dir matches", []string{"build/"}, "build", true, "build/", true},
		{"file does not", []string{"build/"}, "build", false, "", false},
		{"dir at depth", []string{"build/"}, "x/build", true, "build/", true},
		{"anchored dir", []string{"/a/b/"}, "a/b", true, "/a/b/", true},
		{"anchored dir file", []string{"/a/b/"}, "a/b", false, "", false},
		{"skipped dir-only lets earlier decide", []string{"foo", "!foo/"}, "foo", false, "foo", true},
		{"dir-only negation", []string{"foo", "!foo/"}, "foo", true, "!foo/", false},
		{"star dir", []string{"*/"}, "x/y", true, "*/", true},
	})
}

func TestMatchNegationAndOrder(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"negation re-includes", []string{"*.log", "!keep.log"}, "keep.log", false, "!keep.log", false},
		{"negation leaves others", []string{"*.log", "!keep.log"}, "drop.log", false, "*.log", true},
		{"last match wins", []string{"!keep.log", "*.log"}, "keep.log", false, "*.log", true},
		{"later exclusion after negation", []string{"*", "!*.go", "gen_*.go"}, "gen_x.go", false, "gen_*.go", true},
		{"negation alone", []string{"!foo"}, "foo", false, "!foo", false},
		{"no match", []string{"*.log"}, "a.txt", false, "", false},
		{"no patterns", nil, "a", false, "", false},
		{"text keeps escapes", []string{`\#x`}, "#x", false, `\#x`, true},
		{"text drops trailing spaces", []string{"x  "}, "x", false, "x", true},
	})
}

func TestMatchGlobstar(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"leading matches top", []string{"**/foo"}, "foo", false, "**/foo", true},
		{"leading matches deep", []string{"**/foo"}, "a/b/foo", false, "**/foo", true},
		{"leading with path", []string{"**/a/b"}, "x/a/b", false, "**/a/b", true},
		{"leading with path exact", []string{"**/a/b"}, "x/a/c", false, "", false},
		{"trailing matches inside", []string{"a/**"}, "a/b", false, "a/**", true},
		{"trailing matches deep", []string{"a/**"}, "a/b/c/d", false, "a/**", true},
		{"trailing not the dir itself", []string{"a/**"}, "a", true, "", false},
		{"trailing dir-only", []string{"a/**/"}, "a/b/c", true, "a/**/", true},
		{"trailing dir-only file", []string{"a/**/"}, "a/b/c", false, "", false},
		{"middle zero dirs", []string{"a/**/b"}, "a/b", false, "a/**/b", true},
		{"middle one dir", []string{"a/**/b"}, "a/x/b", false, "a/**/b", true},
		{"middle many dirs", []string{"a/**/b"}, "a/x/y/z/b", false, "a/**/b", true},
		{"middle is anchored", []string{"a/**/b"}, "q/a/x/b", false, "", false},
		{"middle last must match", []string{"a/**/b"}, "a/x/b/c", false, "", false},
		{"two globstars", []string{"a/**/**/b"}, "a/b", false, "a/**/**/b", true},
		{"globstar then glob", []string{"doc/**/*.md"}, "doc/a/b/x.md", false, "doc/**/*.md", true},
		{"sole globstar", []string{"**"}, "any/thing", false, "**", true},
		{"sole globstar top", []string{"**"}, "x", false, "**", true},
		{"anchored sole globstar", []string{"/**"}, "x/y", false, "/**", true},
		{"triple star segment", []string{"a/***"}, "a/b", false, "a/***", true},
		{"stars inside segment are one star", []string{"a**b"}, "axxb", false, "a**b", true},
		{"stars inside segment do not cross", []string{"a**b"}, "x/a/y/b", false, "", false},
		{"leading stars with name", []string{"**foo"}, "x/afoo", false, "**foo", true},
		{"escaped stars are literal", []string{`\*\*/x`}, "**/x", false, `\*\*/x`, true},
		{"escaped stars not globstar", []string{`\*\*/x`}, "a/x", false, "", false},
	})
}

func TestMatchClasses(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"set", []string{"[ab].txt"}, "b.txt", false, "[ab].txt", true},
		{"set miss", []string{"[ab].txt"}, "c.txt", false, "", false},
		{"range", []string{"x[a-z]"}, "xq", false, "x[a-z]", true},
		{"range miss", []string{"x[a-z]"}, "xQ", false, "", false},
		{"negated bang", []string{"x[!a]"}, "xb", false, "x[!a]", true},
		{"negated bang miss", []string{"x[!a]"}, "xa", false, "", false},
		{"negated caret", []string{"x[^a]"}, "xb", false, "x[^a]", true},
		{"close bracket first", []string{"a[]]b"}, "a]b", false, "a[]]b", true},
		{"negated close bracket first", []string{"a[!]]b"}, "a]b", false, "", false},
		{"dash first", []string{"a[-x]"}, "a-", false, "a[-x]", true},
		{"dash last", []string{"a[x-]"}, "a-", false, "a[x-]", true},
		{"escaped in class", []string{`a[\]]`}, "a]", false, `a[\]]`, true},
		{"posix class", []string{"[[:upper:]]*"}, "Makefile", false, "[[:upper:]]*", true},
		{"posix class miss", []string{"[[:upper:]]*"}, "makefile", false, "", false},
		{"posix digit and more", []string{"v[[:digit:].]"}, "v.", false, "v[[:digit:].]", true},
		{"class never matches slash", []string{"a[/]b"}, "a/b", false, "", false},
		{"negated class never matches slash", []string{"a[!x]b"}, "a/b", false, "", false},
		{"class matches a character", []string{"[é]"}, "é", false, "[é]", true},
		{"open bracket literal in class", []string{"[[]x"}, "[x", false, "[[]x", true},
	})
}

func TestMatchEscapesAndSpaces(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"escaped hash", []string{`\#notes`}, "#notes", false, `\#notes`, true},
		{"escaped bang", []string{`\!important`}, "!important", false, `\!important`, true},
		{"escaped star", []string{`a\*b`}, "a*b", false, `a\*b`, true},
		{"escaped star literal only", []string{`a\*b`}, "axb", false, "", false},
		{"escaped question", []string{`q\?`}, "q?", false, `q\?`, true},
		{"escaped bracket", []string{`\[x`}, "[x", false, `\[x`, true},
		{"escaped backslash", []string{`a\\b`}, `a\b`, false, `a\\b`, true},
		{"escaped trailing space kept", []string{`sp\ `}, "sp ", false, `sp\ `, true},
		{"trailing spaces trimmed", []string{"sp   "}, "sp", false, "sp", true},
		{"trailing spaces do not match", []string{"sp   "}, "sp ", false, "", false},
		{"leading space kept", []string{" sp"}, " sp", false, " sp", true},
		{"tab kept", []string{"t\t"}, "t\t", false, "t\t", true},
		{"comment ignored", []string{"#x"}, "#x", false, "", false},
		{"blank ignored", []string{"", "   ", "x"}, "x", false, "x", true},
	})
}

func TestMatchNilMatcher(t *testing.T) {
	var m *Matcher
	if pat, excl := m.Match("a/b", true); pat != "" || excl {
		t.Errorf("nil Matcher: Match = (%q, %v), want (\"\", false)", pat, excl)
	}
}

func TestParsePatternsErrors(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		wantErr error
	}{
		{"unterminated class", "a[bc", errUnterminatedClass},
		{"unterminated empty class", "a[]", errUnterminatedClass},
		{"unterminated negated class", "a[!]", errUnterminatedClass},
		{"unterminated class before slash", "a[b/c", errUnterminatedClass},
		{"unterminated by escape", `a[\`, errUnterminatedClass},
		{"unterminated range", "a[b-", errUnterminatedClass},
		{"unknown posix class", "[[:nope:]]", errUnknownClass},
		{"empty posix class", "[[::]]", errUnknownClass},
		{"trailing backslash", `a\`, errTrailingBackslash},
		{"trailing backslash after spaces", `a  \`, errTrailingBackslash},
		{"trailing backslash in later segment", `a/b\`, errTrailingBackslash},
		{"bang alone", "!", errEmptyPattern},
		{"slash alone", "/", errEmptyPattern},
		{"bang slash", "!/", errEmptyPattern},
		{"dot component", "./cache", errNeverComponent},
		{"dot dot component", "../app/cache", errNeverComponent},
		{"dot dot inside", "d/../cache", errNeverComponent},
		{"escaped dot", `\./cache`, errNeverComponent},
		{"negated dot", "!./cache", errNeverComponent},
		{"empty component", "cache//", errNeverComponent},
		{"empty component inside", "a//b", errNeverComponent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePatterns([]string{"ok", tt.pattern})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParsePatterns(%q) error = %v, want %v", tt.pattern, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.pattern)) {
				t.Errorf("error %q does not name the pattern %q", err, tt.pattern)
			}
		})
	}
}

func TestTrimTrailingSpaces(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"a  ", "a"},
		{"   ", ""},
		{`a\ `, `a\ `},
		{`a\  `, `a\ `},
		{`a\\ `, `a\\`},
		{"a b ", "a b"},
		{"a\t", "a\t"},
		{`a\`, `a\`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := trimTrailingSpaces(tt.in); got != tt.want {
				t.Errorf("trimTrailingSpaces(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestReadPatterns(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"blank and comment kept for ParsePatterns", "# c\n\nx\n", []string{"# c", "", "x"}},
		{"bom dropped", "\uFEFFa\nb\n", []string{"a", "b"}},
		{"only first bom", "a\n\uFEFFb\n", []string{"a", "\uFEFFb"}},
		{"inner cr kept", "a\rb\n", []string{"a\rb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPatterns(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ReadPatterns(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestReadPatternsError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadPatterns(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Errorf("ReadPatterns(failing reader) error = %v, want %v", err, boom)
	}
}

// TestReadThenParse checks the --exclude-from path end to end: a file
// written on Windows, with comments, still excludes what it names.
func TestReadThenParse(t *testing.T) {
	lines, err := ReadPatterns(strings.NewReader("# caches\r\n*.tmp\r\n\r\n!keep.tmp  \r\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParsePatterns(lines)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"a.tmp": true, "keep.tmp": false, "x/b.tmp": true} {
		if _, got := m.Match(rel, false); got != want {
			t.Errorf("Match(%q) excluded = %v, want %v", rel, got, want)
		}
	}
}
