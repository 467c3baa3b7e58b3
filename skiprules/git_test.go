package skiprules

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitTree is the tree TestMatchAgreesWithGit builds; a trailing slash marks
// a directory. Names are ASCII because Match steps over characters where git
// steps over bytes, a difference on purpose.
var gitTree = []string{
	"a/", "a/b/", "a/b/c/", "a/b/c/d.txt", "a/b/foo", "a/foo", "foo", "foo.log", "a/x.log",
	"bar/", "bar/foo/", "bar/foo/x", "b/", "b/a/", "b/a/b", "#x", "!x", " sp", "sp ", "[x",
	"a*b", "q?", "A", "a/Ab", "doc/", "doc/a/", "doc/a/b/", "doc/a/b/foo.md", "doc/foo.md",
	"x/", "x/y/", "x/y/z/", "x/y/z/foo", "x/foo", `back\slash`, "ab", "abbb", "a-b", "a]b",
	"a^b", "z/", "z/a/", "z/a/b/", "z/a/b/c", "z/b", "abc/", "abc/d", "t\tab", "fd/", "fd/bar",
}

// gitPatterns are the pattern sets, each one .gitignore file.
var gitPatterns = [][]string{
	{"foo"}, {"/foo"}, {"a/foo"}, {"*.log"}, {"*.log", "!a/x.log"}, {"a/"}, {"a/", "!a/foo"},
	{"**/foo"}, {"**/a/b"}, {"a/**"}, {"a/**/foo"}, {"a/**/b"}, {"**"}, {"/**"}, {"**/"},
	{"a/**/"}, {"z/**/c"}, {"z/**/**/c"}, {"**/**/c"}, {"z/**"}, {"z/a/**/"}, {"a/b/c/**"},
	{"a/b/c/**/"}, {"***"}, {"a/***"}, {`\#x`}, {"#x"}, {`\!x`}, {"!x"}, {`\ sp`}, {`sp\ `},
	{"sp "}, {`\[x`}, {`a\*b`}, {`q\?`}, {"[ab]"}, {"[a-c]"}, {"[!a]"}, {"[^a]"}, {"a[]]b"},
	{"a[!]]b"}, {"a[-]b"}, {"a[b-]"}, {"[[:upper:]]"}, {"a[[:alpha:]]"}, {"*b"}, {"a*"},
	{"a?"}, {"a??"}, {"*"}, {"?"}, {"a**b"}, {"**foo"}, {"doc/*.md"}, {"doc/**/*.md"},
	{"*.md"}, {"/doc/a"}, {"doc/a/"}, {"x/*/z"}, {"x/*/z/"}, {"x/*"}, {"*/foo"}, {"*/*/foo"},
	{"ab*"}, {"a*b*"}, {"*", "!*.log"}, {"*", "!*/"}, {"fd", "!fd/"}, {"fd/"}, {"/fd/"},
	{"fd/bar"}, {"fd/*"}, {`back\\slash`}, {"t\tab"}, {"t?ab"}, {"[[:space:]]sp"},
	{"a[[:punct:]]b"}, {"b/a"}, {"b/a/"}, {"/b/a/b"}, {"abc/"}, {"abc/d"}, {"abc/*"},
	{"**/bar"}, {"*/"}, {"a/*/"}, {"[a-b]/"}, {"a[/]b"}, {`a\/foo`},
}

// TestMatchAgreesWithGit runs git check-ignore over gitTree for each set of
// gitPatterns and compares it with what a walk using Match would leave out:
// the path itself or one of its parent directories excluded.
func TestMatchAgreesWithGit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := makeGitTree(t)
	for _, pats := range gitPatterns {
		ignored := gitCheckIgnore(t, root, pats)
		m, err := ParsePatterns(pats)
		if err != nil {
			t.Fatalf("ParsePatterns(%q): %v", pats, err)
		}
		for _, p := range gitTree {
			rel, isDir := strings.CutSuffix(p, "/")
			if got, want := walkExcludes(m, rel, isDir), ignored[rel]; got != want {
				t.Errorf("patterns %q, path %q (dir %v): excluded %v, git says %v",
					pats, rel, isDir, got, want)
			}
		}
	}
}

// walkExcludes reports whether a walk deciding with m would leave rel out.
func walkExcludes(m *Matcher, rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if _, excl := m.Match(strings.Join(parts[:i], "/"), true); excl {
			return true
		}
	}
	_, excl := m.Match(rel, isDir)
	return excl
}

func makeGitTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range gitTree {
		rel, isDir := strings.CutSuffix(p, "/")
		full := filepath.Join(root, filepath.FromSlash(rel))
		var err error
		if isDir {
			err = os.Mkdir(full, 0o755)
		} else {
			err = os.WriteFile(full, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := gitCommand(t, root, "init", "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return root
}

// gitCheckIgnore writes pats as root's .gitignore and returns the set of
// gitTree paths git ignores.
func gitCheckIgnore(t *testing.T, root string, pats []string) map[string]bool {
	t.Helper()
	gitignore := []byte(strings.Join(pats, "\n") + "\n")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), gitignore, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdin bytes.Buffer
	for _, p := range gitTree {
		stdin.WriteString(strings.TrimSuffix(p, "/") + "\x00")
	}
	cmd := gitCommand(t, root, "check-ignore", "--no-index", "-z", "--stdin")
	cmd.Stdin = &stdin
	out, err := cmd.Output()
	// Exit status 1 means "nothing ignored", not a failure.
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("git check-ignore for %q: %v", pats, err)
	}
	ignored := map[string]bool{}
	for _, s := range strings.Split(string(out), "\x00") {
		ignored[s] = true
	}
	return ignored
}

// gitCommand runs git in dir, isolated from the user's and the system's
// configuration: a global core.excludesFile would change the answers.
func gitCommand(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"XDG_CONFIG_HOME="+t.TempDir(),
		"HOME="+t.TempDir(),
	)
	return cmd
}
