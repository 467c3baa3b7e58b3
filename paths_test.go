package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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
	dest := pathArg{what: "DEST", path: "dest"}
	set := pathArg{what: "the set", path: "set"}
	src := pathArg{what: "SOURCE", path: "src/f"}
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
		pc := pathCheck{inputs: []pathArg{src}, sealed: []pathArg{dest, set}, outputs: []pathArg{{what: c.out, path: c.out}}}
		err := pc.err()
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

// TestOutputDevice: a device node at an output's path is refused (exit 2) and left as it is.
// Once, --receipt /dev/null, run as root, replaced /dev/null with a regular file.
func TestOutputDevice(t *testing.T) {
	mustRoot(t)
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a.txt": {content: "hello"}})
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"create", "-o", "a.zip", "--receipt", "null", "app"},
		{"create", "-o", "a.zip", "--metrics-file", "null", "app"},
		{"create", "--force", "-o", "null", "app"},
		{"status", "--metrics-file", "null", "set"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, " is a character device, not a regular file") {
			t.Errorf("%v: exit %d, %q; want 2 and the device named", args, r.code, r.stderr)
		}
		if info, err := os.Lstat(null); err != nil || info.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%v: null is now %v, %v", args, info.Mode(), err)
		}
	}
}
