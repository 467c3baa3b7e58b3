package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackSQLiteDatabaseSwappedForFIFO: the walk opened app/state.db (nobody's, in
// nobody's folder) and checked the name still leads to it; then SQLite opens the database
// by that name, read-only and blocking. nobody swaps the name for a FIFO in between (strace
// holds SQLite's open of it): the open blocked for ever, with no writer to the FIFO, past
// --sqlite-timeout and Ctrl-C, and root's nightly run with it (killed here after 8 s). The
// watch that unblocks a FIFO looks at the sidecars' names only.
//
// Expected: the run never hangs: the database is lost (replaced while it was copied), exit 3.
func TestAttackSQLiteDatabaseSwappedForFIFO(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "strace")
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"a.txt": {content: "a"}})
	db := filepath.Join(app, "state.db")
	w := openSQLite(t, db, "delete")
	addRows(t, w, 3, 10)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, errPath := filepath.Join(t.TempDir(), "strace.log"), filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	// A file for stderr, not a pipe, and a process group of its own: a run blocked for ever
	// can be killed whole, and waited for.
	cmd := exec.Command("strace", "-f", "-o", log, "-e", "trace=open", "-e", "inject=open:delay_enter=500000",
		binary, "create", "-o", filepath.Join(dir, "b.zip"), "app")
	cmd.Dir, cmd.Stderr = dir, errFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	waitForCall(t, log, func(call string) bool {
		return strings.Contains(call, "open(") && strings.Contains(call, "app/state.db\"") && !returned(call)
	})
	if err := os.Rename(db, db+".old"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(db, 0o644); err != nil {
		t.Fatal(err)
	}
	hung := false
	select {
	case <-done:
	case <-time.After(8 * time.Second):
		hung = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	data, _ := os.ReadFile(errPath)
	stderr := string(data)
	if hung {
		t.Fatalf("the run hung on the FIFO put at the database's name (killed after 8 s): %s", stderr)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitIncomplete || !strings.Contains(stderr, "lost app/state.db: snapshot: replaced while it was copied") {
		t.Errorf("exit %d, want %d and app/state.db lost:\n%s", code, exitIncomplete, stderr)
	}
}
