package format

import (
	"os/exec"
	"testing"
)

// TestShellQuote runs each quoted word through bash, which must give back its bytes.
func TestShellQuote(t *testing.T) {
	words := []string{"plain/path-1.zip", "my dest", "it's", "x$(id)", "x;rm -rf y", "-dash", "", "new\nline", "esc\x1b[2J", "bad\xff", "back\\slash'q", "é"}
	want := map[string]string{"plain/path-1.zip": "plain/path-1.zip", "my dest": "'my dest'", "it's": `'it'\''s'`, "": "''", "new\nline": `$'new\x0aline'`}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, w := range words {
		q := ShellQuote(w)
		if exp, ok := want[w]; ok && q != exp {
			t.Errorf("ShellQuote(%q) = %s, want %s", w, q, exp)
		}
		if !printable(q) {
			t.Errorf("ShellQuote(%q) = %q: not printable", w, q)
		}
		out, err := exec.Command(bash, "-c", `printf %s `+q).Output()
		if err != nil || string(out) != w {
			t.Errorf("bash read ShellQuote(%q) = %s back as %q (%v)", w, q, out, err)
		}
	}
}
