package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// backupMustNotHang runs the binary like backup does, but kills it and fails the test when it
// has not finished after a minute: these tests are about commands that used to hang for good.
func backupMustNotHang(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("backup %v hung (killed after a minute)", args)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running backup %v: %v", args, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// TestReceiptNotARegularFile: whatever sits where a receipt is read, verify answers at once
// with one line naming it, instead of blocking on a FIFO or following a link.
func TestReceiptNotARegularFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		place func(path string) error
		want  string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is not a regular file"},
		{"symlink", func(p string) error { return os.Symlink("/etc/hostname", p) }, "is a symlink"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arch := backupOf(t, dir, "x")
			receipt := arch + ".receipt.json"
			os.Remove(receipt)
			if err := tt.place(receipt); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"verify", arch}, {"verify", "--receipt", receipt, arch}} {
				r := backupMustNotHang(t, dir, args...)
				want := "backup verify: receipt " + receipt + ": " + tt.want + "\n"
				if r.code != exitFailed || r.stderr != want {
					t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
				}
			}
		})
	}
}

// TestArchiveIsAFIFO: an archive path that names a FIFO is refused at once by every command
// that reads archives.
func TestArchiveIsAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.zip")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", fifo}, {"list", fifo}, {"restore", fifo, filepath.Join(dir, "dest")}} {
		r := backupMustNotHang(t, dir, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, fifo+": is not a regular file") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 1 and one line saying %s is not a regular file", args, r.code, r.stderr, fifo)
		}
	}
}
