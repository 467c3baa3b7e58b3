package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSignalUndoAfterKilledRelinkRefusesLinkedFile: DEST holds app/f6 and app/h6, two
// names of one file of the user's ("user 6\n"); the archive holds them as one file of other
// bytes. restore --force saves the before-state, replaces f6 and h6 each by a file of its
// own, then links the group again: it links f6 to the temp name .h6.link-TOKEN-N (in its
// journal) and exchanges that with h6. Killed (SIGKILL) at that exchange, DEST holds f6 with
// two names (f6 and the temp name) and h6. The undo (restore --force --same-permissions
// --xattrs BEFORE-STATE DEST) plans, then sweeps the dead run's temp name: removing a name of
// f6 moves f6's ctime, which the undo's check then took for someone's change:
// "app/f6: was changed or replaced in the destination during the restore", exit 3, and f6
// kept the killed restore's bytes, the user's nowhere in DEST.
// Correct: what the sweep of a killed run's temp names changes is this restore's own doing,
// as taking a name of a file is: the undo puts back f6 and h6 ("user 6\n"), exit 0.
func TestAttackSignalUndoAfterKilledRelinkRefusesLinkedFile(t *testing.T) {
	t.Parallel()
	mustTool(t, "strace")
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	makeTree(t, app, map[string]node{"f1": {content: "one\n"}, "f6": {content: strings.Repeat("file 6\n", 300)}})
	if err := os.Link(filepath.Join(app, "f6"), filepath.Join(app, "h6")); err != nil {
		t.Fatal(err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	reached := false
	for try := 0; try < 40 && !reached; try++ {
		dest := filepath.Join(dir, "dest")
		os.RemoveAll(dest)
		for _, m := range mustGlob(t, filepath.Join(dir, "dest-before-restore-*")) {
			os.Remove(m)
		}
		makeTree(t, filepath.Join(dest, "app"), map[string]node{"f1": {content: "user 1\n"}, "f6": {content: "user 6\n"}})
		if err := os.Link(filepath.Join(dest, "app", "f6"), filepath.Join(dest, "app", "h6")); err != nil {
			t.Fatal(err)
		}
		// The relink's exchange is the 6th rename of the thread that makes it, mostly.
		cmd := exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "-e", "trace=renameat2",
			"-e", "inject=renameat2:signal=SIGKILL:when=6", binary, "restore", "--force", "--jobs", "1", "a.zip", "dest")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		cmd.Run()
		links := mustGlob(t, filepath.Join(dest, "app", ".h6.link-*"))
		before := mustGlob(t, filepath.Join(dir, "dest-before-restore-*.zip"))
		if len(links) != 1 || len(before) != 1 {
			continue
		}
		reached = true
		r := backup(t, runOpts{dir: dir}, "restore", "--force", "--same-permissions", "--xattrs", before[0], "dest")
		for _, name := range []string{"f6", "h6"} {
			got, err := os.ReadFile(filepath.Join(dest, "app", name))
			if err != nil || !bytes.Equal(got, []byte("user 6\n")) {
				t.Errorf("undo after the relink was killed: app/%s holds %.20q (%v), want the user's %q; exit %d:\n%s", name, got, err, "user 6\n", r.code, r.stderr)
			}
		}
		if r.code != exitComplete {
			t.Errorf("undo after the relink was killed: exit %d, want 0:\n%s", r.code, r.stderr)
		}
		if left := mustGlob(t, filepath.Join(dest, "app", ".h6.link-*")); len(left) != 0 {
			t.Errorf("undo left the killed run's temp name %v", left)
		}
	}
	if !reached {
		t.Skip("the kill never fell on the relink's exchange")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
