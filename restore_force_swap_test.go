package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRestoreForceSwappedAtWrite holds a `restore --force` at its first rename into app (its
// plan made and its before-state written, holding app/f) and puts something else at app/f:
// a FIFO or a device (what a before-state cannot hold, which the plan refuses to replace),
// or a new file of the user's; and a file of the user's at app/g, where the plan saw
// nothing. The restore once renamed over all of them: the FIFO and the device gone, the
// user's files gone, none of it in the before-state. What --force replaces is now only what
// the plan saw and the before-state saved (the same file, by device and inode, checked by an
// atomic exchange); anything else stays where it is, and the entry fails (exit 3).
func TestRestoreForceSwappedAtWrite(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	tests := []struct {
		name string
		put  func(path string) error
		is   func(info os.FileInfo) bool
	}{
		{"FIFO", func(path string) error { return syscall.Mkfifo(path, 0o644) },
			func(info os.FileInfo) bool { return info.Mode()&os.ModeNamedPipe != 0 }},
		{"device", func(path string) error { return syscall.Mknod(path, syscall.S_IFCHR|0o644, 1<<8|3) },
			func(info os.FileInfo) bool { return info.Mode()&os.ModeCharDevice != 0 }},
		{"new file", func(path string) error { return os.WriteFile(path, []byte("the user's new text\n"), 0o644) },
			func(info os.FileInfo) bool { return info.Mode().IsRegular() && info.Size() == 20 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.name == "device" {
				mustRoot(t)
			}
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"f": {content: "archived f\n"}, "g": {content: "archived g\n"}})
			arch := filepath.Join(dir, "a.zip")
			mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
			dest := filepath.Join(dir, "dest")
			makeTree(t, filepath.Join(dest, "app"), map[string]node{"f": {content: "old f\n"}})

			code, stderr := forceRestoreHeld(t, dir, arch, dest, func() {
				f, g := filepath.Join(dest, "app/f"), filepath.Join(dest, "app/g")
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				if err := tt.put(f); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(g, []byte("the user's g\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			if code != exitIncomplete {
				t.Errorf("exit %d, want %d\n%s", code, exitIncomplete, stderr)
			}
			for _, want := range []string{"app/f: ", "app/g: appeared in the destination during the restore", "backup restore: incomplete: "} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if info, err := os.Lstat(filepath.Join(dest, "app/f")); err != nil || !tt.is(info) {
				t.Errorf("app/f is %v (%v): the %s put there was replaced", info.Mode(), err, tt.name)
			}
			assertContent(t, filepath.Join(dest, "app/g"), "the user's g\n")
			if got := listDir(t, filepath.Join(dest, "app")); len(got) != 2 {
				t.Errorf("DEST/app holds %q, want f and g (no temp file left)", got)
			}
		})
	}
}

// forceRestoreHeld runs restore --force ARCHIVE DEST under strace, which holds the process on
// entering its first rename into DEST/app (the plan made, the before-state written) while
// swap runs; it returns the exit code and stderr.
func forceRestoreHeld(t *testing.T, dir, arch, dest string, swap func()) (int, string) {
	t.Helper()
	log := filepath.Join(dir, "strace.log")
	cmd := exec.Command("strace", "-f", "-qq", "-o", log, "-P", filepath.Join(dest, "app"), "-e", "trace=renameat,renameat2",
		"-e", "inject=renameat,renameat2:delay_enter=1500000:when=1", binary, "restore", "--force", "--undo-dir", dir, arch, dest)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCall(t, log, func(c string) bool { return strings.Contains(c, "renameat") && !returned(c) })
	swap()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestRestoreForceUnlinkFails: restore --force replaces app/a and then removes the file it
// replaced, which had the temp name after the exchange. When that removal failed (strace
// makes every unlinkat in app fail with EIO), the old file stayed in DEST as
// .a.restore-TOKEN-1 for good: the journal that listed it was removed at the end of the
// run. A temp name not removed is tried again before the folders' times are set and at the
// end, and while one is left the journal stays, for the next restore into DEST to sweep; a
// warning says so.
func TestRestoreForceUnlinkFails(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "src/app"), map[string]node{"a": {content: "archived\n"}})
	arch := filepath.Join(dir, "a.zip")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", arch, "src/app"), exitComplete)
	dest := filepath.Join(dir, "dest")
	makeTree(t, filepath.Join(dest, "app"), map[string]node{"a": {content: "old\n"}})
	cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-P", filepath.Join(dest, "app"),
		"-e", "trace=unlinkat", "-e", "inject=unlinkat:error=EIO:when=1+", binary, "restore", "--force", "--undo-dir", dir, arch, dest)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitComplete || !strings.Contains(string(out), "warning: ") {
		t.Errorf("exit %d, want 0 with a warning about the temp file left\n%s", code, out)
	}
	assertContent(t, filepath.Join(dest, "app/a"), "archived\n")
	// The next restore into DEST sweeps what the journal lists.
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", arch, dest), exitComplete)
	if got := listDir(t, filepath.Join(dest, "app")); len(got) != 1 {
		t.Errorf("DEST/app holds %q after the next restore, want a only", got)
	}
	if got := listDir(t, dest); len(got) != 1 {
		t.Errorf("DEST holds %q, want app only", got)
	}
}
