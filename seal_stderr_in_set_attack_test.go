package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackSealedRunStderrInsideSet: a cron line that appends an encrypted run's stderr to a
// log in the set's folder (2>>/mnt/nas/set/backup.log) put in the set, beside the ciphertext,
// the names of the files backed up: every one under -v, and those warned about or skipped
// without it. stdout's file inside a set is refused; stderr's was not looked at. An
// encrypted run whose stderr is a file inside its set is now refused (exit 2, one line,
// nothing backed up), and says nothing more there.
func TestAttackSealedRunStderrInsideSet(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"zq7x9kw-secret-name.txt": {content: "x\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
	before := listDir(t, set)
	log := filepath.Join(set, "backup.log")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(binary, "create", "-v", "--output-dir", "set", "--recipient", key.recipient, "app")
	cmd.Dir, cmd.Stderr = dir, f
	err = cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	}
	got := string(must(os.ReadFile(log)))
	if code != exitUsage || strings.Contains(got, "zq7x9kw") || !strings.Contains(got, "stderr") {
		t.Errorf("an encrypted run with stderr in its set: exit %d, the set's log %q; want 2, no file's name", code, got)
	}
	if after := listDir(t, set); len(after) != len(before)+1 {
		t.Errorf("the set holds %q after the refused run; before it %q", after, before)
	}
	// Elsewhere, stderr names what it names.
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-v", "--output-dir", "set", "--recipient", key.recipient, "app"), exitComplete)
}
