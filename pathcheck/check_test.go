package pathcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathCheck puts outputs named in the ways an attacker (or a typo) names them through
// the one check: a symlink, a symlinked folder followed by "..", a dangling symlink whose
// target is created through it, a hard link, a loop.
func TestPathCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"dest/app", "set", "deep/er", "src"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"up":       "deep/er",       // up/.. is deep, not .
		"dangling": "dest/app/new",  // mkdir dangling creates dest/app/new
		"loop":     "loop",          // resolves to nothing
		"setlink":  dir + "/set",    // absolute
		"rel":      "../" + "set",   // relative to deep/
		"deep/rel": "../set/LATEST", // a dangling link into the set
	} {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("src/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link("src/f", "hard"); err != nil {
		t.Fatal(err)
	}
	dest := Arg{What: "DEST", Path: "dest"}
	set := Arg{What: "the set", Path: "set"}
	src := Arg{What: "SOURCE", Path: "src/f"}
	for _, c := range []struct {
		out  string
		want string // "" passes
	}{
		{"dangling", "dangling is inside DEST"},
		{"dangling/x", "dangling/x is inside DEST"},
		{"dest/app/../app", "dest/app/../app is inside DEST"},
		{"dest/..", ""},
		{"up/../er/x", ""},
		{"up/../../set/x", "up/../../set/x is inside the set"}, // deep/.. is ., then set
		{"setlink/.", "setlink/. is the set"},
		{"deep/rel", "deep/rel is inside the set"},
		{"hard", "hard is also SOURCE"},
		{"loop", ""},
		{"elsewhere/x", ""},
	} {
		pc := Check{Inputs: []Arg{src}, Sealed: []Arg{dest, set}, Outputs: []Arg{{What: c.out, Path: c.out}}}
		err := pc.Err()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.out, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.out, err, c.want)
		}
	}
	if got, want := resolvePath("up/../er"), filepath.Join(resolvePath("."), "deep/er"); got != want {
		t.Errorf("resolvePath(up/../er) = %s, want %s (.. after the symlink, as the kernel takes it)", got, want)
	}
}

// TestPathCheckInputInsideOutput: an output folder (a cache a run writes while it reads)
// may not hold an input, by any name; an input that merely sits beside it may.
func TestPathCheckInputInsideOutput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"cache/s3", "src", "other"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("cache", "cachelink"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in, want string
	}{
		{"cache/s3", "SOURCE cache/s3 is inside --cache-dir"},
		{"cachelink/s3", "SOURCE cachelink/s3 is inside --cache-dir"},
		{"src", ""},
		{"other/../cache/s3/x", "SOURCE other/../cache/s3/x is inside --cache-dir"},
	} {
		pc := Check{Inputs: []Arg{{What: "SOURCE " + c.in, Path: c.in}}, Outputs: []Arg{{What: "--cache-dir cache", Path: "cache", Folder: true}}}
		err := pc.Err()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.in, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}
