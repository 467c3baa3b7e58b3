package format

import (
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Plural(tt.n, "file", "files"); got != tt.want {
				t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

// TestQuoteName: a name is printed as it is when every byte of it is printable, else
// quoted as %q does; a problem is always one line.
func TestQuoteName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"app/a.txt", "app/a.txt"},
		{"app/with space", "app/with space"},
		{"naïve/日本", "naïve/日本"},
		{`a\b`, `a\b`},
		{"x\nbackup: complete", `"x\nbackup: complete"`},
		{"t\x1b]0;pwned\x07", `"t\x1b]0;pwned\a"`},
		{"tab\there", `"tab\there"`},
		{"bad\xffname", `"bad\xffname"`},
		{"rtl\u202eexe.txt", `"rtl\u202eexe.txt"`},
		{"nbsp\u00a0", `"nbsp\u00a0"`},
		{`"quoted"`, `"\"quoted\""`},
		{"b\uFFFDad", `"b\ufffdad"`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := QuoteName(tt.name); got != tt.want {
			t.Errorf("QuoteName(%q) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestEscapeTextOnce: what EscapeText and QuoteName give is printable, so escaping it again
// changes nothing. A U+FFFD (which text decoded from JSON holds for bytes that were not
// UTF-8) once stayed in the escaped text, so every later escape doubled its backslashes:
// a name in an error that sayf escaped came out as \\\"b\\\\xffad\\\".
func TestEscapeTextOnce(t *testing.T) {
	for _, s := range []string{
		"plain", "b\xffad", "b\uFFFDad", `"b\xffad", its receipt names "b\uFFFDad"`,
		"x\nforged", "\x1b[2J\uFFFD", `back\slash` + "\xfe",
	} {
		once := EscapeText(s)
		if twice := EscapeText(once); twice != once {
			t.Errorf("EscapeText(%q) = %s, and escaped again %s", s, once, twice)
		}
		q := QuoteName(s)
		if !printable(q) || EscapeText(q) != q {
			t.Errorf("QuoteName(%q) = %s, which escaping changes", s, q)
		}
		if strings.ContainsRune(once+q, '\uFFFD') {
			t.Errorf("%q escaped holds U+FFFD: %s, %s", s, once, q)
		}
	}
}
