package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackRestoreUserLockRaceWithReader: nobody holds root's DEST's flock (ignored, a
// reader's), so root's own lock in /run/backup alone keeps root's restores apart, and its
// file is made, locked, checked and removed by each run: two real restore --force runs
// started together into DEST, 10 times, each end complete or refused (exit 4), never both
// refused, never a before-state holding the other run's files, and no lock file left.
func TestAttackRestoreUserLockRaceWithReader(t *testing.T) {
	t.Parallel()
	mustRoot(t)
	mustTool(t, "flock")
	mustTool(t, "setpriv")
	for i := range 10 {
		f := newLockFixture(t)
		if err := os.Chmod(f.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(f.dest, &st); err != nil {
			t.Fatal(err)
		}
		reader := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "flock", "-s", f.dest, "sleep", "60")
		reader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := reader.Start(); err != nil {
			t.Fatal(err)
		}
		waitForFlock(t, st.Ino)
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for range 2 {
			cmd := exec.Command(binary, "restore", "--force", "--json", f.arch, f.dest)
			var stdout strings.Builder
			cmd.Stdout, cmd.Dir = &stdout, f.dir
			cmds, outs = append(cmds, cmd), append(outs, &stdout)
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		complete := 0
		for j, cmd := range cmds {
			cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if code != exitComplete && code != exitLocked {
				t.Errorf("run %d.%d: exit %d, want 0 or 4\n%s", i, j, code, outs[j])
				continue
			}
			out := restoreJSONOf(t, result{code: code, stdout: outs[j].String()})
			if code == exitComplete {
				complete++
			}
			if out.Undo == nil {
				continue
			}
			held := readZipGo(t, out.Undo.Archive)
			for _, name := range []string{"app/a", "app/b", "app/new"} {
				if got, ok := held[name]; ok && strings.HasPrefix(got, "archived") || name == "app/new" && ok {
					t.Errorf("run %d.%d: the before-state holds %s %q: the other run's", i, j, name, got)
				}
			}
		}
		killGroup(reader)
		if complete == 0 {
			t.Errorf("run %d: both refused", i)
		}
		if names, _ := filepath.Glob(fmt.Sprintf("/run/backup/restore-%d-%d.lock", st.Dev, st.Ino)); len(names) != 0 {
			t.Errorf("run %d: root's lock on DEST left behind: %v", i, names)
		}
	}
}
