package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
