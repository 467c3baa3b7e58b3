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
