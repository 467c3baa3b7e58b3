package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackUndoStrandedUserFileRemoved: the undo moves app/sub/b.txt aside to a journal
// temp name and finds that the move took a file the user saved there (by rename) after the
// check. It moves it back, but the user has meanwhile saved yet another file at b.txt: the
// move back fails (EEXIST) and the undo says the user's file is now at the temp name
// (strandedError). That temp name stays pending in the undo's journal, and the journal's
// end of run removes what is pending: the user's first file is deleted, though the undo
// itself just told the user it is at the temp name.
func TestAttackUndoStrandedUserFileRemoved(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	arch := backupOf(t, dir, "a")
	dest := filepath.Join(dir, "dest")
	r := backup(t, runOpts{dir: dir}, "restore", "--force", "--undo-dir", dir, arch, dest)
	mustExit(t, r, exitComplete)
	undo := printedUndo(t, r.stderr)
	sub := filepath.Join(dest, "app/sub")
	b := filepath.Join(sub, "b.txt")
	log := filepath.Join(dir, "strace.log")
	args := append([]string{"-f", "-qq", "-o", log, "-P", sub, "-e", "trace=unlinkat,renameat2",
		"-e", "inject=renameat2:delay_enter=1500000:delay_exit=1500000:when=1", binary}, undo...)
	cmd := exec.Command("strace", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, log, func(l string) bool { return strings.Contains(l, `renameat2(`) && strings.Contains(l, `, "b.txt"`) })
	// The user saves work at b.txt by rename (first version).
	save := func(content string) {
		tmp := filepath.Join(sub, ".b.txt.swp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, b); err != nil {
			t.Fatal(err)
		}
	}
	save("the user's first version\n")
	// The held move takes it to the temp name; then the user saves again.
	for i := 0; ; i++ {
		if _, err := os.Lstat(b); errors.Is(err, os.ErrNotExist) {
			break
		}
		if i > 300 {
			t.Fatal("the undo's move never took b.txt")
		}
		time.Sleep(5 * time.Millisecond)
	}
	save("the user's second version\n")
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	assertContent(t, b, "the user's second version\n")
	ents, _ := os.ReadDir(sub)
	found := false
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if data, err := os.ReadFile(filepath.Join(sub, e.Name())); err == nil && string(data) == "the user's first version\n" {
			found = true
		}
	}
	if !found {
		t.Errorf("the user's first version, which the undo moved to a temp name, is gone from app/sub (holds %q); undo exit %d:\n%s",
			names, cmd.ProcessState.ExitCode(), stderr.String())
	}
}
