package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// assertUsageError checks that a run was refused as a usage error: exit 2 and stderr the
// one line that names the problem, followed by the usual hint, nothing more.
func assertUsageError(t *testing.T, r result, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != exitUsage || len(lines) != 2 || !strings.Contains(lines[0], want) || !strings.HasPrefix(lines[1], "Run 'backup help") {
		t.Errorf("exit %d, stderr %q; want %d and one line saying %q, then the hint", r.code, r.stderr, exitUsage, want)
	}
}

// listDir lists the names in dir, so that a test can check that a refused run created
// nothing.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestCreateOutputIsInput refuses every run where an output would be written over the other
// output or over an input: once, --receipt x.zip replaced the archive x.zip with its receipt
// and the run said complete.
func TestCreateOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{
		"a/x":                {content: "x"},
		"f.txt":              {content: "a file SOURCE"},
		"x.zip.receipt.json": {content: "a file SOURCE named like a receipt"},
		"patterns":           {content: "*.tmp\n"},
		"old.zip":            {content: "old archive"},
		"sym.json":           {kind: "symlink", content: "old.zip"},
		"here":               {kind: "symlink", content: "."},
	})
	if err := os.Link(filepath.Join(dir, "old.zip"), filepath.Join(dir, "hard.zip")); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "new.zip", "--receipt", "new.zip", "a"}, "--receipt new.zip is also the archive (-o new.zip)"},
		{[]string{"--verify", "-o", "new.zip", "--receipt", "new.zip", "a"}, "--receipt new.zip is also the archive"},
		{[]string{"--force", "-o", "old.zip", "--receipt", "old.zip", "a"}, "--receipt old.zip is also the archive"},
		{[]string{"-o", "new.zip", "--receipt", "a/../new.zip", "a"}, "--receipt a/../new.zip is also the archive"},
		{[]string{"-o", "new.zip", "--receipt", "here/new.zip", "a"}, "--receipt here/new.zip is also the archive"},
		{[]string{"--force", "-o", "old.zip", "--receipt", "hard.zip", "a"}, "--receipt hard.zip is also the archive"},
		{[]string{"--force", "-o", "old.zip", "--receipt", "sym.json", "a"}, "--receipt sym.json is also the archive"},
		{[]string{"--force", "-o", "f.txt", "f.txt"}, "the archive (-o f.txt) is also SOURCE " + filepath.Join(dir, "f.txt")},
		{[]string{"--force", "-o", "here/f.txt", "a", "f.txt"}, "the archive (-o here/f.txt) is also SOURCE " + filepath.Join(dir, "f.txt")},
		{[]string{"-o", "new.zip", "--receipt", "f.txt", "f.txt"}, "--receipt f.txt is also SOURCE " + filepath.Join(dir, "f.txt")},
		{[]string{"--receipt", "f.txt", "f.txt"}, "--receipt f.txt is also SOURCE " + filepath.Join(dir, "f.txt")},
		{[]string{"-o", "x.zip", "x.zip.receipt.json"}, "the receipt x.zip.receipt.json is also SOURCE " + filepath.Join(dir, "x.zip.receipt.json")},
		{[]string{"-o", "new.zip", "--receipt", "patterns", "--exclude-from", "patterns", "a"}, "--receipt patterns is also --exclude-from patterns"},
		{[]string{"--force", "-o", "patterns", "--exclude-from", "patterns", "a"}, "the archive (-o patterns) is also --exclude-from patterns"},
		{[]string{"-o", "new.zip", "--receipt", "a", "a"}, "--receipt a is a folder"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := backup(t, runOpts{dir: dir}, append([]string{"create"}, tt.args...)...)
			assertUsageError(t, r, tt.want)
			if got := listDir(t, dir); !slices.Equal(got, before) {
				t.Errorf("the folder holds %v, want %v", got, before)
			}
			assertContent(t, filepath.Join(dir, "old.zip"), "old archive")
			assertContent(t, filepath.Join(dir, "f.txt"), "a file SOURCE")
			assertContent(t, filepath.Join(dir, "patterns"), "*.tmp\n")
		})
	}
}

// TestCreateReceiptInsideSource keeps what works: a receipt (and archive) written inside a
// SOURCE is an output, not an input, and is not archived.
func TestCreateReceiptInsideSource(t *testing.T) {
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"a/x": {content: "x"}})
	r := backup(t, runOpts{dir: dir}, "create", "-o", "a/b.zip", "--receipt", "a/b.json", "a")
	if r.code != exitComplete {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	got := readZip(t, filepath.Join(dir, "a", "b.zip"))
	if _, ok := got["a/b.json"]; ok {
		t.Error("the receipt was archived")
	}
	if rc := readReceipt(t, filepath.Join(dir, "a", "b.json")); rc.Status != "complete" {
		t.Errorf("receipt status %q, want complete", rc.Status)
	}
}
