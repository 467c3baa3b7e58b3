package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The fourth adversarial pass of December 2nd (attack4dec): each test is a defect found by
// auditing every line backup prints and every JSON record for names and text from outside,
// failing until it is fixed.

// hostile is a name that, printed raw, sets the terminal's title (OSC … BEL) and then
// returns the cursor to the start of the line (CR), to overwrite what a person reads.
const hostile = "a\x1b]0;pwned\x07\rb"

// rawLines returns the lines of a run's stdout and stderr that hold ESC, BEL or CR raw.
func rawLines(r result) []string {
	var raw []string
	for _, out := range []string{r.stdout, r.stderr} {
		for _, line := range strings.Split(out, "\n") {
			if strings.ContainsAny(line, "\x1b\x07\r") {
				raw = append(raw, line)
			}
		}
	}
	return raw
}

// TestAttack4DecUsageErrorPathsRaw: a usage error is printed by usageError (glue.go) as
// "backup CMD: %v" with the error as it is, and the errors of the path-valued flags and
// arguments embed the path as given: --exclude-from (create.go), --recipients-file and
// --identity (keys.go), --attic (prune.go), and activate's ARCHIVE given as a path
// (activate.go). docs/operations.md: every name or path printed for people is quoted when
// it holds a byte that is not printable; a path holding ESC, BEL or CR drives the terminal.
func TestAttack4DecUsageErrorPathsRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	runs := [][]string{
		{"create", "-o", "x.zip", "--exclude-from", "ex" + hostile, "app"},
		{"create", "-o", "x.zip.age", "--recipients-file", "rc" + hostile, "app"},
		{"verify", "--identity", "id" + hostile, "set"},
		{"prune", "--keep-last", "1", "--attic", "attic" + hostile, "set"},
		{"activate", "set", "d" + hostile + "/app-20261201T000000Z.zip"},
	}
	for _, args := range runs {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage {
			t.Errorf("backup %s: exit %d, want the usage error %d; stderr %q", args[0], r.code, exitUsage, r.stderr)
		}
		for _, line := range rawLines(r) {
			t.Errorf("backup %s %q: printed the path raw: %q", args[0], args[len(args)-2], line)
		}
	}
}
