package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackExcludeFromLongLine gives --exclude-from files with one huge line: a bad
// pattern ("[" and 900 KB more, as in a binary file named by mistake) and a line past the
// reader's 1 MiB limit. The first printed the whole pattern, quoted, as its one line of
// stderr (900 KB, which journald cuts and no one reads); the second said "bufio.Scanner:
// token too long", naming no line. Same for -x. Correct: exit 2 with one short line naming
// the file, the line and, shortened, the pattern; nothing written.
func TestAttackExcludeFromLongLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	long := "[" + strings.Repeat("a", 900_000)
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("ok\n"+long+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "huge.txt"), []byte("ok\n"+strings.Repeat("b", 2<<20)+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--exclude-from", "bad.txt"}, "bad.txt: line 2: bad pattern"},
		{[]string{"--exclude-from", "huge.txt"}, "huge.txt: line 2: longer than"},
		{[]string{"-x", long[:100_000]}, "bad pattern"},
	} {
		r := backup(t, runOpts{dir: dir}, append(append([]string{"create", "-q", "-o", "a.zip"}, tc.args...), "app")...)
		mustExit(t, r, exitUsage)
		if first, _, _ := strings.Cut(r.stderr, "\n"); len(first) > 300 || !strings.Contains(first, tc.want) {
			t.Errorf("%.40q: first line of stderr is %d bytes, %.200q; want under 300 holding %q", tc.args, len(first), first, tc.want)
		}
		if exists(filepath.Join(dir, "a.zip")) {
			t.Errorf("%.40q: a.zip written", tc.args)
		}
	}
}
