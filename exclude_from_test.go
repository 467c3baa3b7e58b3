package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExcludeFromNotAFile: --exclude-from naming a FIFO that no one writes to hung create
// for ever (os.Open blocks until a writer comes), and /dev/urandom was read without end.
// The file is opened without blocking and checked: anything but a regular file is a usage
// error, exit 2, one line, nothing written.
func TestExcludeFromNotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"a": {content: "a\n"}})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := makeSocket(t, filepath.Join(dir, "sock")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "folder"), 0o755)
	os.Symlink("fifo", filepath.Join(dir, "link-to-fifo"))
	tests := []struct{ path, want string }{
		{"fifo", "backup create: --exclude-from fifo: is not a regular file\n"},
		{"link-to-fifo", "backup create: --exclude-from link-to-fifo: is not a regular file\n"},
		{"/dev/urandom", "backup create: --exclude-from /dev/urandom: is not a regular file\n"},
		{"sock", "backup create: --exclude-from sock: "},
		{"folder", "backup create: --exclude-from folder: is a directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "create", "-o", "x.zip", "--exclude-from", tt.path, "app")
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			if ctx.Err() != nil {
				t.Fatal("create hung on the --exclude-from file")
			}
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.HasPrefix(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 2 {
				t.Errorf("exit %d, stderr %q; want 2 and %q, then the usage hint", code, stderr.String(), tt.want)
			}
			if _, err := os.Lstat(filepath.Join(dir, "x.zip")); err == nil {
				t.Error("x.zip written")
			}
		})
	}
}

// TestAttackExcludeDotSegmentMatchesNothing: a pattern is matched against the path below its
// SOURCE, which never holds a "." or ".." component nor an empty one, so -x ./cache,
// cache/./, ../app/cache, d/../cache and cache// (and the same lines in an --exclude-from
// file) match nothing: the run says complete, 0 excluded, and archives the cache the user
// excluded. "!" and "/" alone are refused for this very reason (git would match nothing,
// which is never what someone typing --exclude meant).
// Correct: a usage error naming the pattern, exit 2, nothing written.
func TestAttackExcludeDotSegmentMatchesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"cache/big": {content: "x"}, "d/f": {content: "y"}})
	for _, pattern := range []string{"./cache", "cache/./", "../app/cache", "d/../cache", "cache//", "/./cache", `\./cache`} {
		for _, from := range []bool{false, true} {
			args := []string{"create", "-o", "a.zip", "-x", pattern, "app"}
			if from {
				os.WriteFile(filepath.Join(dir, "ex"), []byte("*.tmp\n"+pattern+"\n"), 0o644)
				args = []string{"create", "-o", "a.zip", "--exclude-from", "ex", "app"}
			}
			r := backup(t, runOpts{dir: dir}, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, strconv.Quote(pattern)) {
				t.Errorf("%v: exit %d, stderr %q; want %d naming %q", args[1:], r.code, r.stderr, exitUsage, pattern)
			}
			os.Remove(filepath.Join(dir, "a.zip"))
			os.Remove(filepath.Join(dir, "a.zip.receipt.json"))
		}
	}
}

// TestAttackExcludeAbsolutePathSaysNothing: restic's and borg's users name what to leave
// out by its absolute path (-x /srv/app/secrets). Here a pattern is matched below each
// SOURCE, so with SOURCE /srv/app it names /srv/app/srv/app/secrets: the secrets the user
// meant to keep out of the backup are archived, exit 0, complete, "0 excluded", and nothing
// says why.
// Correct: a pattern that spells a SOURCE's own path is warned of, with the pattern that
// does what was meant.
func TestAttackExcludeAbsolutePathSaysNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	makeTree(t, src, map[string]node{"secrets/key": {content: "k"}, "f": {content: "f"}})
	for _, pattern := range []string{filepath.Join(src, "secrets"), filepath.Join(src, "secrets") + "/"} {
		r := backup(t, runOpts{dir: dir}, "create", "-o", "a.zip", "--force", "-x", pattern, src)
		mustExit(t, r, exitComplete)
		want := "backup create: warning: --exclude " + strconv.Quote(pattern) + " is matched below each SOURCE: to leave out " + filepath.Join(src, "secrets") + ", write \"/secrets"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("-x %s: stderr %q; want a line with %q", pattern, r.stderr, want)
		}
	}
}

// TestAttackExcludeFromBadLineNamed: a line of an --exclude-from file that is no pattern
// was told as `--exclude: bad pattern "[abc"`, the flag the user did not give, with neither
// the file nor the line: in a file of hundreds of lines, or several files, nothing said
// where to look. The error names the file and the line, as a compiler's does.
func TestAttackExcludeFromBadLineNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src"), map[string]node{"a": {content: "1"}})
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	for path, text := range map[string]string{good: "*.tmp\n", bad: "# caches\n*.tmp\n\n[abc\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := backup(t, runOpts{dir: dir}, "create", "-o", filepath.Join(dir, "a.zip"), "--exclude-from", good, "--exclude-from", bad, "src")
	mustExit(t, r, exitUsage)
	if want := "--exclude-from " + bad + ": line 4: bad pattern \"[abc\""; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want it to say %q", r.stderr, want)
	}
}
