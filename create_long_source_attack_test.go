package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackCreateLongSourceName backs up a SOURCE whose name is 203 and 219 bytes with no
// -o: its default archive name (NAME-TIME.zip, its receipt NAME-TIME.zip.receipt.json and
// their temp names ".NAME-….tmp-N") passes NAME_MAX (255), so the run failed at the write
// of the archive or, worse, of the receipt after the archive was written (exit 1). Correct:
// a usage error before anything is done (exit 2, naming the SOURCE and saying to give -o
// FILE), with or without --output-dir, and nothing written; -o FILE backs it up, and a name
// that fits (202 bytes, with room for a busy second's -99) is backed up as ever.
func TestAttackCreateLongSourceName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []int{203, 219, 240} {
		name := strings.Repeat("n", n)
		makeTree(t, filepath.Join(dir, name), map[string]node{"f.txt": {content: "f\n"}})
		for _, args := range [][]string{
			{"create", "-q", name},
			{"create", "-q", "--output-dir", "set", name},
			{"create", "-q", "-o", ".", name},
		} {
			r := backup(t, runOpts{dir: dir}, args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != exitUsage || !strings.Contains(first, name) || !strings.Contains(first, "-o FILE") {
				t.Errorf("%d bytes, %q: exit %d, stderr %q; want %d and a line naming the SOURCE and -o FILE", n, args[2:len(args)-1], r.code, r.stderr, exitUsage)
			}
		}
		mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "long.zip", name), exitComplete)
		os.Remove(filepath.Join(dir, "long.zip"))
		os.Remove(filepath.Join(dir, "long.zip.receipt.json"))
		os.RemoveAll(filepath.Join(dir, name))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("the failed runs left %d names, want none", len(entries))
	}
	fits := strings.Repeat("n", 202)
	makeTree(t, filepath.Join(dir, fits), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", fits), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "status", "set"), exitComplete)
}
