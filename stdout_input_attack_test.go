package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackStdoutAppendsToInput runs verify and list with stdout appended (>>) to a file
// the command reads: the archive, its receipt, a backup set's LATEST. Each said 0 and
// appended its report to the user's file: the archive then failed verify (size differs from
// the receipt), the receipt no longer parsed, the set's LATEST named junk. create checks
// stdout's file against its inputs; these did not. Correct: exit 2 with one line naming the
// file, and every file as it was.
func TestAttackStdoutAppendsToInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	for _, tc := range []struct {
		into string
		args []string
	}{
		{"a.zip", []string{"verify", "--json", "a.zip"}},
		{"a.zip.receipt.json", []string{"verify", "a.zip"}},
		{"a.zip", []string{"list", "a.zip"}},
		{"a.zip.receipt.json", []string{"list", "--json", "a.zip"}},
		{"set/LATEST", []string{"verify", "set"}},
		{"set/LATEST", []string{"list", "set"}},
	} {
		path := filepath.Join(dir, tc.into)
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, tc.args...)
		cmd.Dir, cmd.Stdout = dir, f
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		f.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 1 {
			t.Errorf("%q >> %s: exit %d, stderr %q; want 2 and one line", tc.args, tc.into, code, stderr.String())
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("%q >> %s: the file changed (%d bytes, was %d)", tc.args, tc.into, len(after), len(before))
			os.WriteFile(path, before, 0o600)
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "a.zip"), exitComplete)
}
