package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAttackDotDotOutputIntoSetFolder writes create's outputs into a backup set's folder
// through lnk/.., lnk a symlink to a folder inside the set (its lost+found, say): the
// kernel takes lnk first, so lnk/../x.zip is SET/x.zip. create refuses an archive, a
// --receipt and a --metrics-file in any set's folder, but found the folder with
// filepath.Dir, which cleans lnk/.. away and looked at the current folder: each run
// exited 0 and wrote into the set (an archive and its receipt among its runs, a metrics
// file, a receipt alone), and status --metrics-file lnk/../m.prom of another set did the
// same. Correct: exit 2, one line, nothing new in the set.
func TestAttackDotDotOutputIntoSetFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "other", "app"), exitComplete)
	set := filepath.Join(dir, "set")
	if err := os.Mkdir(filepath.Join(set, "lost+found"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("set/lost+found", filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		entries, err := os.ReadDir(set)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	before := names()
	for _, args := range [][]string{
		{"create", "-q", "-o", "lnk/../x.zip", "app"},
		{"create", "-q", "-o", "y.zip", "--receipt", "lnk/../y.receipt.json", "app"},
		{"create", "-q", "-o", "z.zip", "--metrics-file", "lnk/../m.prom", "app"},
		{"status", "--metrics-file", "lnk/../m.prom", "other"},
	} {
		r := backup(t, runOpts{dir: dir}, args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q; want 2", args, r.code, r.stderr)
		}
		if after := names(); !slices.Equal(after, before) {
			t.Errorf("%q: the set's folder holds %q, was %q", args, after, before)
			for _, n := range after {
				if !slices.Contains(before, n) {
					os.Remove(filepath.Join(set, n))
				}
			}
		}
	}
}
