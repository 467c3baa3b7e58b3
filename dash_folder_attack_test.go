package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackDashFolderIsAFolder gives "-" to the arguments and flags that name a folder a
// command writes into, which refuseDash did not cover: restore a.zip - restored the whole
// tree into a folder named "-" and adopt - a.zip made a backup set there, exit 0 both; with
// ./- present, restore --undo-dir - and prune --attic - wrote into it, and create --cache-dir
// - made a cache folder named "-". Correct, as for --output-dir -: exit 2 with one line
// saying to give ./-, nothing written; ./- itself is a name like any other.
func TestAttackDashFolderIsAFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f.txt": {content: "f\n"}})
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "a.zip", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", "set", "app"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", "dest"), exitComplete)
	dash := filepath.Join(dir, "-")
	refused := func(t *testing.T, r result, args []string, made bool) {
		t.Helper()
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != exitUsage || !strings.Contains(first, "./-") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a line saying to give ./-", args, r.code, r.stderr)
		}
		entries, _ := os.ReadDir(dash)
		if _, err := os.Lstat(dash); (err == nil) != made || len(entries) > 0 {
			t.Errorf("%q wrote into ./-: %v", args, entries)
		}
	}
	for _, args := range [][]string{
		{"restore", "-q", "a.zip", "-"},
		{"adopt", "-", "a.zip"},
	} {
		refused(t, backup(t, runOpts{dir: dir}, args...), args, false)
		os.RemoveAll(dash)
	}
	if err := os.Mkdir(dash, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"restore", "-q", "--force", "--undo-dir", "-", "a.zip", "dest"},
		{"prune", "--keep-last", "1", "--attic", "-", "set"},
	} {
		refused(t, backup(t, runOpts{dir: dir}, args...), args, true)
	}
	t.Run("cache-dir", func(t *testing.T) {
		s := newS3Set(t)
		args := []string{"create", "-q", "--output-dir", s.loc, "--cache-dir", "-", "app"}
		os.RemoveAll(dash)
		refused(t, backup(t, runOpts{dir: dir, env: s.env}, args...), args, false)
	})
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", "a.zip", "./-"), exitComplete)
	if _, err := os.Stat(filepath.Join(dash, "app", "f.txt")); err != nil {
		t.Errorf("restore a.zip ./-: %v", err)
	}
}
