package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackRestoreStdoutDestSwapped runs restore --force --json into d, a symlink to
// real1, with stdout appended (>>) to real2/app/f.txt, a file the archive holds too, and
// turns d to real2 while restore is held (strace) at its first look at --undo-dir, after
// the name stdout goes into was computed from d (outside DEST then) and before DEST was
// locked and planned. The restore replaced real2/app/f.txt, wrote its report into the
// replaced file, which no name reaches, and exited 0: the report was lost. Correct: which
// file stdout goes into is asked of the folder the restore locked, and so refused: exit 2.
func TestAttackRestoreStdoutDestSwapped(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	for _, d := range []string{"real1", "real2"} {
		mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", d), exitComplete)
	}
	undo := filepath.Join(dir, "U")
	if err := os.Mkdir(undo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real1", filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "real2/app/f.txt")
	if err := os.WriteFile(path, []byte("the user's own lines\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("strace", "-f", "-qq", "-o", "/dev/null", "-P", undo, "-e", "trace=newfstatat,statx",
		"-e", "inject=newfstatat,statx:delay_exit=3000000:when=1", binary,
		"restore", "--force", "--json", "--undo-dir", undo, "a.zip", "d")
	var stderr strings.Builder
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, f, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	tmp := filepath.Join(dir, "d.new")
	if err := os.Symlink("real2", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	got, _ := os.ReadFile(path)
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || string(got) != "the user's own lines\n" {
		t.Errorf("d swapped to real2: exit %d, stderr %q, real2/app/f.txt %q; want 2, the file as it was", code, stderr.String(), got)
	}
}
