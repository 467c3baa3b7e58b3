package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetTakesOneSource: create --output-dir SET with two SOURCEs made a run named after
// the first that held both, which activate then refused ("the archive's entries are under
// \"b\", its name says \"a\""), and which no encrypted set could ever hold: a set is the runs
// of one source. Two SOURCEs into a set are a usage error, exit 2, nothing made; -o takes
// them.
func TestSetTakesOneSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"a/f": {content: "a\n"}, "b/g": {content: "b\n"}})
	set := filepath.Join(dir, "set")
	r := backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "a", "b")
	mustExit(t, r, exitUsage)
	if !strings.Contains(r.stderr, "a backup set holds one SOURCE, 2 given") {
		t.Errorf("stderr = %q, want the refusal", r.stderr)
	}
	if _, err := os.Lstat(set); !os.IsNotExist(err) {
		t.Errorf("the set's folder was made (%v)", err)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ab.zip", "a", "b"), exitComplete)
}

// TestSetRunOfSeveralSourcesSaid: a run of two SOURCEs that an earlier version made into a
// set (named after the first) is refused by verify of the set as any target holding another
// source is, but the line says what it is and how it is still read: by its path.
func TestSetRunOfSeveralSourcesSaid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, map[string]node{"a/f": {content: "a\n"}, "b/g": {content: "b\n"}})
	set := filepath.Join(dir, "set")
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "--output-dir", set, "a"), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "create", "-q", "-o", "ab.zip", "a", "b"), exitComplete)
	target := filepath.Join(set, readLatest(t, set))
	if err := os.WriteFile(target, readFile(t, filepath.Join(dir, "ab.zip")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target+".receipt.json", readFile(t, filepath.Join(dir, "ab.zip.receipt.json")), 0o600); err != nil {
		t.Fatal(err)
	}
	editReceipt(t, target+".receipt.json", func(rc map[string]any) { rc["archive"].(map[string]any)["path"] = target })

	r := backup(t, runOpts{dir: dir}, "verify", set)
	mustExit(t, r, exitFailed)
	if want := `the archive holds "b" beside "a", the source its name says: a set holds one (read a run of several SOURCEs by its path)`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	mustExit(t, backup(t, runOpts{dir: dir}, "verify", "-q", target), exitComplete)
	mustExit(t, backup(t, runOpts{dir: dir}, "restore", "-q", target, "dest"), exitComplete)
}
