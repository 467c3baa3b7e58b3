package format

import "testing"

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
		{"", ""},
	}
	for _, tt := range tests {
		if got := QuoteName(tt.name); got != tt.want {
			t.Errorf("QuoteName(%q) = %s, want %s", tt.name, got, tt.want)
		}
	}
}
