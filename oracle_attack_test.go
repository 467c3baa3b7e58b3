package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// excludedPaths returns the stored names a receipt lists as excluded.
func excludedPaths(t *testing.T, receipt string) []string {
	t.Helper()
	var paths []string
	for _, e := range readReceipt(t, receipt).Excluded {
		paths = append(paths, e.Path)
	}
	return paths
}

// TestAttackExcludeArgBeatsExcludeFrom: the docs give -x and --exclude-from gitignore's
// rules, and git (ls-files --exclude and --exclude-from) lets a pattern given on the command
// line decide over the lines of a file, wherever each flag stands. backup put every -x
// before every file's lines, so the file's decided: with a file saying *.log, -x
// '!keep.log' excluded keep.log anyway, and with a file saying !keep.log, -x '*.log' kept it.
func TestAttackExcludeArgBeatsExcludeFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"keep.log": {content: "k"}, "a.log": {content: "a"}})
	os.WriteFile(filepath.Join(dir, "logs"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "keep"), []byte("!keep.log\n"), 0o644)
	tests := []struct {
		args []string
		want []string
	}{
		// git ls-files --others --ignored --exclude-from=logs --exclude='!keep.log': a.log
		{[]string{"--exclude-from", "logs", "-x", "!keep.log"}, []string{"app/a.log"}},
		{[]string{"-x", "!keep.log", "--exclude-from", "logs"}, []string{"app/a.log"}},
		// git ls-files --others --ignored --exclude='*.log' --exclude-from=keep: a.log, keep.log
		{[]string{"-x", "*.log", "--exclude-from", "keep"}, []string{"app/a.log", "app/keep.log"}},
	}
	for _, tt := range tests {
		args := slices.Concat([]string{"create", "-o", "a.zip", "--force"}, tt.args, []string{"app"})
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, r.code, r.stderr)
		}
		if got := excludedPaths(t, filepath.Join(dir, "a.zip.receipt.json")); !slices.Equal(got, tt.want) {
			t.Errorf("%v: excluded %q, want %q (as git decides)", tt.args, got, tt.want)
		}
	}
}
