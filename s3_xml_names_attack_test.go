package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackS3NamesAListingCannotCarry: a bucket lists its keys in XML 1.0, which cannot
// carry U+FFFE or U+FFFF (servers send U+FFFD, as Go's encoder does, or refuse), nor bytes
// that are not UTF-8. The one rule refused only control characters: a prefix or a SOURCE
// name holding U+FFFF made runs that were written and activated, but that no listing ever
// named again (status showed no run, --keep-last pruned nothing, "kept 0", so the archives
// piled up for ever), and a prefix that is not UTF-8 failed every command with the
// server's 500 (exit 1) instead of a usage error.
func TestAttackS3NamesAListingCannotCarry(t *testing.T) {
	t.Parallel()
	s := newS3Set(t)
	dir := t.TempDir()
	makeTree(t, filepath.Join(dir, "app"), map[string]node{"f": {content: "1"}})
	for _, c := range []struct{ what, loc, source string }{
		{"a prefix holding U+FFFF", s.loc + "/p\uffff", "app"},
		{"a prefix that is not UTF-8", s.loc + "/q\xff", "app"},
		{"a SOURCE name holding U+FFFF", s.loc, "uni\uffff"},
	} {
		makeTree(t, filepath.Join(dir, c.source), map[string]node{"f": {content: "1"}})
		for range 2 {
			r := backup(t, runOpts{dir: dir, env: s.env}, "create", "--output-dir", c.loc, "--keep-last", "1", c.source)
			if r.code == exitUsage {
				break
			}
			if r.code != exitComplete {
				t.Errorf("%s: create exits %d, want 0 or 2:\n%s", c.what, r.code, r.stderr)
				break
			}
		}
		if n := filesUnder(t, s.dir); n > 0 && n != 3 {
			st := backup(t, runOpts{dir: dir, env: s.env}, "status", c.loc)
			t.Errorf("%s: two runs with --keep-last 1 leave %d objects (want 3, or a usage error and none), status lists %d runs:\n%s",
				c.what, n, strings.Count(st.stdout, ".zip")-1, st.stdout)
		}
		if err := os.RemoveAll(s.dir); err != nil {
			t.Fatal(err)
		}
	}
	if r := backup(t, runOpts{dir: dir, env: s.env}, "status", s.loc+"/q\xff"); r.code != exitUsage {
		t.Errorf("status of a prefix that is not UTF-8: exit %d, want 2:\n%s", r.code, r.stderr)
	}
}

// filesUnder counts the regular files in the tree at root (the objects of a bucket's posix
// folder); 0 when root is missing.
func filesUnder(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
