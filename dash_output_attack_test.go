package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackDashOutputIsAFile gives "-" to the flags that name a file or folder the command
// writes. In backup "-" means stdout (-o -), but these took it as a name: -o - --receipt -
// streamed the archive to stdout and wrote its receipt to a file named "-" in the current
// folder, exit 0; --metrics-file - and --output-dir - did the same with a metrics file and a
// whole backup set, and the next status --metrics-file - replaced that receipt with
// Prometheus text. Correct: exit 2 with one line saying to give ./- for a file of that name,
// nothing written; ./- itself is a name like any other.
func TestAttackDashOutputIsAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	for _, args := range [][]string{
		{"create", "-q", "-o", "a.zip", "--receipt", "-", "app"},
		{"create", "-q", "-o", "-", "--receipt", "-", "app"},
		{"create", "-q", "-o", "b.zip", "--metrics-file", "-", "app"},
		{"create", "-q", "--output-dir", "-", "app"},
		{"status", "--metrics-file", "-", "set"},
		{"sets", "--metrics-file", "-", "."},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != exitUsage || !strings.Contains(first, "./-") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a line saying to give ./-", args, r.code, r.stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
			t.Errorf("%q made a file named -", args)
			os.RemoveAll(filepath.Join(dir, "-"))
		}
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "c.zip", "--receipt", "./-", "app"), exitComplete)
	if _, err := os.Stat(filepath.Join(dir, "-")); err != nil {
		t.Errorf("--receipt ./-: %v", err)
	}
}
